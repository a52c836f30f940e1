"""File discovery for ingestion: files and folders in, a deterministic list of files out.

Folders are walked (recursively by default) in sorted order, skipping hidden files and folders
(a leading dot) and the junk that editors and operating systems leave behind (Office ``~$`` lock
files, ``Thumbs.db``, ``desktop.ini``, ``foo~`` backups, ``__pycache__``, ``node_modules``).
``include`` and ``exclude`` are glob patterns; a pattern without ``/`` matches a file's name, one
with ``/`` matches its path relative to the folder being walked (``*`` also crosses folders, and a
leading ``**/`` may match nothing). Matching ignores case, so ``*.pdf`` finds ``REPORT.PDF``.
A file named explicitly is always taken: the filters only choose among the files found in folders.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ripplemem.errors import InvalidInputError, InvalidTypeError

PathLike = str | os.PathLike[str]

JUNK_FILE_NAMES = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "icon\r"})
JUNK_DIR_NAMES = frozenset({"__pycache__", "node_modules", "$recycle.bin", "system volume information"})

OnSkip = Callable[[Path, str], None]


def is_junk(name: str) -> bool:
    """Whether a file name is OS or editor debris: hidden, an Office lock file, a backup copy."""
    lowered = name.lower()
    return (name.startswith((".", "~$")) or name.endswith("~") or lowered in JUNK_FILE_NAMES)


def _patterns(value: str | Iterable[str] | None, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    try:
        patterns = tuple(value)
    except TypeError:
        raise InvalidTypeError(f"{field}: expected a glob pattern or a list of them, "
                               f"got {type(value).__name__}") from None
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
        raise InvalidTypeError(f"paths: expected a path or a list of paths, "
                               f"got {type(paths).__name__}") from None
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
) -> list[Path]:
    """The files to ingest under ``paths`` (files and/or folders), resolved, deduplicated, in order.

    Order is deterministic: the inputs in the order given, each folder's files sorted by their
    path relative to it. A missing path raises ``InvalidInputError`` before anything is read;
    a subfolder that cannot be listed is passed to ``on_skip(path, reason)`` (if given) and skipped.
    ``exclude`` also prunes folders whose name or relative path matches.
    """
    roots = _as_paths(paths)
    if not roots:
        raise InvalidInputError("paths: give at least one file or folder")
    include_patterns = _patterns(include, "include") or ("*",)
    exclude_patterns = _patterns(exclude, "exclude")
    missing = [str(root) for root in roots if not root.exists()]
    if missing:
        raise InvalidInputError(f"paths: no such file or folder: {', '.join(missing)}")

    found: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            found.append(resolved)

    for root in roots:
        if not root.is_dir():
            add(root)
            continue
        for relative in _walk(root, recursive, exclude_patterns, on_skip):
            lowered = relative.lower()
            if _matches(lowered, include_patterns) and not _matches(lowered, exclude_patterns):
                add(root / relative)
    return found


def _walk(root: Path, recursive: bool, exclude: tuple[str, ...], on_skip: OnSkip | None) -> list[str]:
    """Relative posix paths of the non-junk files under root, sorted; excluded folders pruned."""
    files: list[str] = []

    def report(error: OSError) -> None:
        if on_skip is not None:
            where = Path(error.filename) if error.filename else root
            on_skip(where, f"cannot list folder: {error.strerror or error}")

    for current, dirnames, filenames in os.walk(root, onerror=report):
        base = Path(current).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        kept = []
        for name in dirnames:
            relative = (prefix + name).lower()
            if (name.startswith(".") or name.lower() in JUNK_DIR_NAMES
                    or (exclude and _matches(relative, exclude))):
                continue
            kept.append(name)
        dirnames[:] = sorted(kept) if recursive else []
        for name in filenames:
            if not is_junk(name):
                files.append(prefix + name)
    return sorted(files, key=lambda rel: rel.split("/"))
