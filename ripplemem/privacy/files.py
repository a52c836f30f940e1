"""The raw bytes of every file under a store, for erase verification, read without breaking the
locks of a live SQLite database.

On POSIX, closing any descriptor of a file drops every fcntl lock the process holds on it, so a
plain open()/close() of ripplemem.db (or its -wal, -shm) while the store's connection is open lets
another process checkpoint and delete the WAL under this one: its committed rows vanish. So the
store's database is read through SQLite itself (store/sqlite/side_connection.py: a second connection of
the same SQLite library, which keeps its descriptors open while the first holds locks), and the
files of a database held by another library in this process (Chroma's chroma.sqlite3, opened by
chromadb's own bundled SQLite) are not opened at all: RippleMem never gives Chroma any text, and
the vector checks cover it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ripplemem.privacy.byte_search import CHUNK, chunks_of, file_chunks
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.sqlite.side_connection import database_image, database_values, side_connection

# SQLite's companions of a database file, and the names SQLite databases go by.
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def database_chunks(root: str) -> Iterator[bytes]:
    """The store's database as SQLite sees it now (the WAL's newest pages included): every page,
    freelist and unused space too (Python 3.11+), else every value of every row."""
    with side_connection(root) as conn:
        image = database_image(conn)
        if image is not None:
            yield from chunks_of(image)
            return
        block: list[bytes] = []
        size = 0
        for value in database_values(conn):
            block.append(value)
            size += len(value)
            if size >= CHUNK:
                yield b"".join(block)
                block, size = [], 0
        yield b"".join(block)


def is_live_database(name: str) -> bool:
    """Whether a file is (part of) a SQLite database that must not be opened with open()."""
    return name.endswith(SIDE_FILE_SUFFIXES) or name.endswith(DATABASE_SUFFIXES)


def store_files(root: str) -> Iterator[tuple[str, Iterable[bytes] | None]]:
    """(path relative to the store, its bytes in chunks) for every file under the store; None for
    the bytes of a live database that is not read (see the module docstring)."""
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative == DB_FILENAME:
                yield relative, database_chunks(root)
            elif is_live_database(name):
                yield relative, None
            else:
                yield relative, file_chunks(path)
