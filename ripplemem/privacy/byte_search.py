"""Find many byte strings in one pass over any amount of bytes (how erase verification searches files).

Each needle's first ANCHOR bytes, read as a 64-bit integer, go into one sorted array; a scan reads
the data's 8-byte window at every offset as integers (numpy, eight strided views) and looks them
all up with one binary search, so it costs one pass whatever the number of needles. Each hit is
then confirmed against the whole needles. Needles shorter than ANCHOR (a few short names) go
through one small regex."""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Iterator

import numpy as np

ANCHOR = 8
CHUNK = 4 << 20  # bytes searched per step: the GIL is released between steps


class Needles:
    """A set of byte strings, each found wherever it occurs in a stream of chunks."""

    def __init__(self, needles: Iterable[bytes]) -> None:
        self._sorted = sorted({n for n in needles if n})
        self._longest = max((len(n) for n in self._sorted), default=0)
        anchored = [n[:ANCHOR] for n in self._sorted if len(n) >= ANCHOR]
        self._anchors = np.unique(np.frombuffer(b"".join(anchored), dtype="<u8"))
        short = sorted({n for n in self._sorted if len(n) < ANCHOR})
        self._short = re.compile(_trie(short, 0)) if short else None

    def __bool__(self) -> bool:
        return bool(self._sorted)

    def scan(self, chunks: Iterable[bytes]) -> set[bytes]:
        """The needles occurring anywhere in the concatenation of the chunks."""
        found: set[bytes] = set()
        if not self._sorted:
            return found
        carry = b""
        for chunk in chunks:
            buffer = carry + chunk
            # Starts closer to the end than the longest needle are searched with the next chunk.
            limit = len(buffer) - self._longest + 1
            if limit > 0:
                found.update(self._search(buffer, limit))
                carry = buffer[limit:]
            else:
                carry = buffer
        found.update(self._search(carry, len(carry)))
        return found

    def scan_text(self, text: str) -> set[bytes]:
        """The needles occurring in the UTF-8 bytes of a text."""
        return self.scan([text.encode("utf-8", "surrogatepass")])

    def _search(self, buffer: bytes, limit: int) -> Iterator[bytes]:
        """Needles starting before `limit` (every start is tried, overlapping ones too)."""
        starts = set(self._anchored_starts(buffer, limit)) | set(self._short_starts(buffer, limit))
        for start in sorted(starts):
            yield from self._at(buffer[start : start + self._longest])

    def _anchored_starts(self, buffer: bytes, limit: int) -> Iterator[int]:
        if not len(self._anchors):
            return
        for offset in range(ANCHOR):
            count = min((len(buffer) - offset) // ANCHOR, (limit - offset + ANCHOR - 1) // ANCHOR)
            if count <= 0:
                continue
            windows = np.frombuffer(buffer, dtype="<u8", count=count, offset=offset)
            places = np.searchsorted(self._anchors, windows)
            places[places == len(self._anchors)] = 0
            for j in np.flatnonzero(self._anchors[places] == windows):
                yield offset + ANCHOR * int(j)

    def _short_starts(self, buffer: bytes, limit: int) -> Iterator[int]:
        start = 0
        while self._short is not None and start < limit:
            match = self._short.search(buffer, start)
            if match is None or match.start() >= limit:
                return
            yield match.start()
            start = match.start() + 1

    def _at(self, window: bytes) -> Iterator[bytes]:
        """Every needle that is a prefix of the window: the candidates shrink along the sorted list."""
        while window:
            index = bisect.bisect_right(self._sorted, window) - 1
            if index < 0:
                return
            candidate = self._sorted[index]
            common = len(os.path.commonprefix([candidate, window]))
            if common == len(candidate):
                yield candidate
                common -= 1
            # Any shorter needle that is a prefix of the window is a prefix of window[:common].
            window = window[:common]


def _trie(needles: list[bytes], depth: int) -> bytes:
    """Regex source matching any of the sorted, distinct byte strings (which share needles[0][:depth])."""
    parts: list[bytes] = []
    ends_here = False
    i = 0
    while i < len(needles):
        if len(needles[i]) == depth:
            ends_here = True
            i += 1
            continue
        byte = needles[i][depth]
        j = i
        while j < len(needles) and needles[j][depth] == byte:
            j += 1
        first, last = needles[i], needles[j - 1]
        shared = depth + 1
        while shared < min(len(first), len(last)) and first[shared] == last[shared]:
            shared += 1
        parts.append(re.escape(first[depth:shared]) + _trie(needles[i:j], shared))
        i = j
    if not parts:
        return b""
    body = parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"
    return b"(?:" + body + b")?" if ends_here else body


def chunks_of(data: bytes) -> Iterator[bytes]:
    """A large buffer in CHUNK-sized pieces (so a scan lets other threads run between them)."""
    view = memoryview(data)
    for start in range(0, len(data), CHUNK):
        yield bytes(view[start : start + CHUNK])


def file_chunks(path: str) -> Iterator[bytes]:
    """A file's bytes in CHUNK-sized pieces (never a live SQLite file: see privacy_verify)."""
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            yield block
