"""File discovery for ingestion: files and folders in, a deterministic list of files out.

Folders are walked (recursively by default) in sorted order, skipping hidden files and folders
(a leading dot) and the junk that editors and operating systems leave behind (Office ``~$`` lock
files, ``Thumbs.db``, ``desktop.ini``, ``foo~`` backups, ``__pycache__``, ``node_modules``).
``include`` and ``exclude`` are glob patterns; a pattern without ``/`` matches a file's name, one
with ``/`` matches its path relative to the folder being walked (``*`` also crosses folders, and a
leading ``**/`` may match nothing). Matching ignores case, so ``*.pdf`` finds ``REPORT.PDF``.
A file named explicitly is always taken: the filters only choose among the files found in folders.

The folder may be someone else's: only regular files are taken (a FIFO, socket or device is
refused before anything opens it), a symlink is followed only to a file inside the folder it was
found in (anywhere with ``follow_outside_symlinks=True``), each real file and folder is taken
once (so link loops end), and a name that is not valid UTF-8 is refused. Each refusal goes to
``on_skip(path, reason, kind)`` and the walk goes on.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from ripplemem.errors import InvalidInputError, InvalidTypeError

PathLike = str | os.PathLike[str]

JUNK_FILE_NAMES = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "icon\r"})
JUNK_DIR_NAMES = frozenset({"__pycache__", "node_modules", "$recycle.bin", "system volume information"})

# Called with (path, reason, kind) for a file or folder that is not taken; kinds as in ConversionError.
OnSkip = Callable[[Path, str, str], None]

_SPECIAL = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
}


class _Refused(Exception):
    """A found path that is not read, with the reason and kind reported for it."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


def file_type(mode: int) -> str | None:
    """What a stat mode is when it is not a regular file ('a named pipe (FIFO)', ...), else None."""
    if stat.S_ISREG(mode):
        return None
    return _SPECIAL.get(stat.S_IFMT(mode), "not a regular file")


def special_file_reason(what: str) -> str:
    """The reason a FIFO, socket, device or folder is not read."""
    return f"{what}, not a regular file: only regular files are read"


def is_junk(name: str) -> bool:
    """Whether a file name is OS or editor debris: hidden, an Office lock file, a backup copy."""
    lowered = name.lower()
    return name.startswith((".", "~$")) or name.endswith("~") or lowered in JUNK_FILE_NAMES


def _patterns(value: str | Iterable[str] | None, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    try:
        patterns = tuple(value)
    except TypeError:
        raise InvalidTypeError(
            f"{field}: expected a glob pattern or a list of them, got {type(value).__name__}"
        ) from None
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise InvalidInputError(f"{field}: every pattern must be a non-empty string, got {pattern!r}")
    return tuple(p.strip().replace("\\", "/").lower() for p in patterns)


def _matches(relative: str, patterns: tuple[str, ...]) -> bool:
    """Whether a relative posix path (lowercased) matches any of the (lowercased) patterns."""
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        if "/" not in pattern:
            if fnmatch.fnmatchcase(name, pattern):
                return True
            continue
        pattern = pattern.lstrip("/")
        if fnmatch.fnmatchcase(relative, pattern):
            return True
        while pattern.startswith("**/"):
            pattern = pattern[3:]
            if fnmatch.fnmatchcase(relative, pattern):
                return True
    return False


def _as_paths(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    if isinstance(paths, bytes):
        raise InvalidTypeError("paths: expected a path or a list of paths, got bytes")
    try:
        items = list(paths)
    except TypeError:
        raise InvalidTypeError(
            f"paths: expected a path or a list of paths, got {type(paths).__name__}"
        ) from None
    result = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise InvalidTypeError(f"paths: expected str or Path entries, got {type(item).__name__}")
        result.append(Path(item))
    return result


def discover_files(
    paths: PathLike | Iterable[PathLike],
    *,
    recursive: bool = True,
    include: str | Iterable[str] | None = ("*",),
    exclude: str | Iterable[str] | None = (),
    on_skip: OnSkip | None = None,
    follow_outside_symlinks: bool = False,
) -> list[Path]:
    """The files to ingest under ``paths`` (files and/or folders), resolved, deduplicated, in order.

    Order is deterministic: the inputs in the order given, each folder's files sorted by their
    path relative to it. A missing path raises ``InvalidInputError`` before anything is read.
    A subfolder that cannot be listed and a file that is refused (see the module docstring; a file
    named explicitly is held to the folder it sits in) are passed to ``on_skip(path, reason,
    kind)`` (if given) and skipped. ``exclude`` also prunes folders whose name or relative path matches.
    """
    roots = _as_paths(paths)
    if not roots:
        raise InvalidInputError("paths: give at least one file or folder")
    if not isinstance(follow_outside_symlinks, bool):
        raise InvalidTypeError(
            f"follow_outside_symlinks must be True or False, got {follow_outside_symlinks!r}"
        )
    include_patterns = _patterns(include, "include") or ("*",)
    exclude_patterns = _patterns(exclude, "exclude")
    missing = [str(root) for root in roots if not os.path.lexists(root)]  # a broken link is refused later
    if missing:
        raise InvalidInputError(f"paths: no such file or folder: {', '.join(missing)}")

    found: list[Path] = []
    seen: set[Path] = set()

    def skip(path: Path, reason: str, kind: str) -> None:
        if on_skip is not None:
            on_skip(Path(os.path.abspath(path)), reason, kind)

    def add(path: Path, folder: Path) -> None:
        try:
            resolved = _vet(path, folder, follow_outside_symlinks)
        except _Refused as refused:
            skip(path, refused.reason, refused.kind)
            return
        if resolved not in seen:
            seen.add(resolved)
            found.append(resolved)

    for root in roots:
        if not root.is_dir():
            add(root, Path(os.path.realpath(root.parent)))
            continue
        folder = Path(os.path.realpath(root))
        for relative in _walk(root, folder, recursive, exclude_patterns, follow_outside_symlinks, skip):
            lowered = relative.lower()
            if _matches(lowered, include_patterns) and not _matches(lowered, exclude_patterns):
                add(root / relative, folder)
    return found


def _vet(path: Path, folder: Path, follow_outside: bool) -> Path:
    """The real path of a found file; raises ``_Refused`` when it is not to be read."""
    _check_name(path)
    try:
        real = Path(os.path.realpath(path, strict=True))
        info = os.stat(real)
    except OSError as exc:
        raise _unreachable(path, exc) from None
    _check_name(real)
    if not follow_outside and not real.is_relative_to(folder):
        raise _Refused(
            f"a symlink to {real}, outside the folder {folder}: not read "
            f"(follow_outside_symlinks=True or --follow-outside-symlinks reads it)",
            "symlink",
        )
    what = file_type(info.st_mode)
    if what is not None:
        raise _Refused(special_file_reason(what), "special_file")
    return real


def _check_name(path: Path) -> None:
    # Names are stored as UTF-8 text; os.fsdecode turns other bytes into lone surrogates.
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(os.path.abspath(path))
        raise _Refused(f"the file name is not valid UTF-8 ({shown!r}); rename it", "bad_name") from None


def _unreachable(path: Path, error: OSError) -> _Refused:
    """Why resolving a found path failed: a link loop, a broken link, permissions, or else."""
    if error.errno == errno.ELOOP:
        return _Refused("a symlink loop: following it never reaches a file", "symlink")
    if isinstance(error, FileNotFoundError):
        if os.path.islink(path):
            return _Refused("a broken symlink: what it points to does not exist", "symlink")
        return _Refused("the file disappeared before it was read", "error")
    if isinstance(error, PermissionError):
        return _Refused("permission denied: the file cannot be reached", "permission")
    return _Refused(f"cannot reach the file: {error.strerror or error}", "error")


def _walk(
    root: Path, folder: Path, recursive: bool, exclude: tuple[str, ...], follow_outside: bool, skip: OnSkip
) -> list[str]:
    """Relative posix paths of the non-junk files under root, sorted; excluded folders pruned."""
    files: list[str] = []
    visited = {str(folder)}

    def report(error: OSError) -> None:
        where = Path(error.filename) if error.filename else root
        skip(where, f"cannot list folder: {error.strerror or error}", "permission")

    for current, dirnames, filenames in os.walk(root, onerror=report, followlinks=follow_outside):
        base = Path(current).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        kept = []
        for name in dirnames if recursive else ():
            relative = (prefix + name).lower()
            if (
                name.startswith(".")
                or name.lower() in JUNK_DIR_NAMES
                or (exclude and _matches(relative, exclude))
            ):
                continue
            if _enter(Path(current, name), folder, follow_outside, visited, skip):
                kept.append(name)
        dirnames[:] = sorted(kept)
        for name in filenames:
            if not is_junk(name):
                files.append(prefix + name)
    return sorted(files, key=lambda rel: rel.split("/"))


def _enter(path: Path, folder: Path, follow_outside: bool, visited: set[str], skip: OnSkip) -> bool:
    """Whether to walk into a subfolder: each real folder once, a symlink leaving the folder only
    when asked, one staying inside never (its files are found where they really are)."""
    real = os.path.realpath(path)
    if path.is_symlink() and not follow_outside:
        if not Path(real).is_relative_to(folder):
            skip(
                path,
                f"a symlink to the folder {real}, outside the folder {folder}: not read "
                f"(follow_outside_symlinks=True or --follow-outside-symlinks reads it)",
                "symlink",
            )
        return False
    if real in visited:
        return False
    visited.add(real)
    return True
