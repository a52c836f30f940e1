"""Chroma as the vector index: one collection per user (default) or one shared collection with a
user filter on every call (docs/design-notes.md#privacy-and-isolation); our own vectors, telemetry
off. Embedded (PersistentClient under the store) or on a server (HttpClient), where a store id in
every collection name keeps stores that share the server apart."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from ripplemem.core.choices import Isolation, literal_values
from ripplemem.errors import InvalidInputError, MissingDependencyError, StoreError
from ripplemem.store.process_lock import ProcessLock
from ripplemem.store.vectors.base import NumpyIndex, UserMatrix, VectorFilter, VectorIndex
from ripplemem.store.vectors.chroma_calls import (
    COLLECTION_PREFIX,
    NO_ROWS,
    all_ids,
    collection_name,
    delete,
    nearest,
    nearest_many,
    read_all,
    upsert,
    where_clause,
)
from ripplemem.store.vectors.chroma_files import (
    CHROMA_DIRNAME,
    LOCK_FILENAME,
    IndexDamage,
    modality_folder,
    remove_broken_files,
    remove_dropped_segments,
)
from ripplemem.store.vectors.chroma_health import find_damage
from ripplemem.store.vectors.exact_mirror import ExactMirrors

# isolation="filter": every user's vectors in this one collection, each tagged with its user id.
# Not under COLLECTION_PREFIX, so consistency checks never take it for a departed user's collection.
SHARED_COLLECTION = "ripplemem_shared"
ISOLATIONS = literal_values(Isolation)
# Chroma's PersistentClient keeps each collection's HNSW graph in process memory and is not safe for
# two processes at once (vectors written by one are lost when the other persists its stale copy).
# Every operation on an on-disk index therefore holds the inter-process lock LOCK_FILENAME, and a
# process whose copy is stale (another process wrote since) reopens its client first.
_T = TypeVar("_T")


class ChromaIndex:
    """Vectors in Chroma: PersistentClient under the store's path, or HttpClient for a server.

    ``isolation="collection"`` keeps one collection per user; "filter" keeps one shared collection
    whose every read, count and delete carries a user_id filter. ``None`` uses what the store holds
    (the shared collection if it exists, else per-user collections).

    With a server ``client``, ``namespace`` (the store id) is in every collection name, and only
    collections of this namespace are ever listed, checked or dropped; ``temporary`` drops them all
    on close (a store whose SQLite lives in memory). A server needs no file lock or client reopen.

    On disk, the files are checked before Chroma loads them, at open and whenever another process
    wrote: ``verify`` is "files" (cheap, every open), "graph" (after a crash) or "probe" (also a
    query per collection in a child process), see chroma_health.find_damage. A broken collection
    is deleted (``repair``: its vectors are to be re-added from SQLite, see ``damage()`` and
    ``on_damage``) or, without ``repair``, never loaded: it reads as empty and refuses writes.
    Without a path or client (an in-memory store) Chroma keeps the vectors in this process only.
    """

    name = "chroma"
    persistent = True
    remote = False
    on_damage: Callable[[], None] | None = None

    def __init__(
        self,
        path: str | None = None,
        *,
        client: Any = None,
        namespace: str = "",
        isolation: str | None = None,
        temporary: bool = False,
        verify: str = "files",
        repair: bool = True,
    ) -> None:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise MissingDependencyError(
                "The Chroma vector index needs chromadb: pip install 'ripplemem[chroma]', "
                "or pass vector_index='numpy'."
            ) from exc
        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        self._collections: dict[str, Any] = {}
        # Small per-user collections are also held in memory and searched exactly (exact_mirror);
        # not on a server, where other clients' writes would go unseen.
        self._exact = ExactMirrors()
        self._lock = threading.RLock()
        self._process_lock: ProcessLock | None = None
        self._reopen: Callable[[], Any] | None = None
        self._prefix = f"{COLLECTION_PREFIX}{namespace}_" if namespace else COLLECTION_PREFIX
        self._shared = f"{SHARED_COLLECTION}_{namespace}" if namespace else SHARED_COLLECTION
        self._temporary = temporary
        # Broken parts found and not yet refilled from SQLite; on_damage() is told of later finds.
        self._damage: list[IndexDamage] = []
        self._repair = repair
        self._path = path
        self._broken: set[str | None] = set()  # left broken (repair=False); None: the whole database
        self._directory = ""
        if client is not None:
            self.name = "chroma-server"
            self.remote = True
            self._client = client
        elif path is None:
            self.persistent = False
            self._client = chromadb.EphemeralClient(settings=settings)
        else:
            directory = self._directory = os.path.join(path, CHROMA_DIRNAME)
            os.makedirs(directory, exist_ok=True)
            self._process_lock = ProcessLock(os.path.join(path, LOCK_FILENAME))
            self._reopen = lambda: chromadb.PersistentClient(path=directory, settings=settings)
            with self._process_lock.held():
                self._process_lock.changed()
                self._open_checked(verify)
        self.isolation = self._settle_isolation(isolation)

    def _settle_isolation(self, wanted: str | None) -> str:
        """The isolation this index runs with: the wanted one, checked against what is stored."""
        if wanted is not None and wanted not in ISOLATIONS:
            raise InvalidInputError(f"isolation must be one of {', '.join(ISOLATIONS)}; got {wanted!r}")
        with self._guard():
            names = self._own_names()
            shared = self._shared in names
            per_user = any(name.startswith(self._prefix) for name in names)
            stored = "filter" if shared else "collection" if per_user else None
            if wanted is not None and stored is not None and wanted != stored:
                raise InvalidInputError(
                    f"this store keeps its vectors with isolation={stored!r}; open it with "
                    f"isolation={stored!r} (or None), or rebuild it into a new store"
                )
            chosen = wanted or stored or "collection"
            if chosen == "filter" and not shared and self._client is not None:
                # Created now, so a later open with isolation=None finds the shared layout.
                self._create(self._shared)
        return chosen

    def _open_checked(self, verify: str) -> None:
        """Check the files before Chroma loads them, then open the client on what is sound."""
        assert self._process_lock is not None and self._reopen is not None
        self._exact.forget()
        found = find_damage(self._directory, verify)
        if verify == "probe":
            self._process_lock.mark_written()  # Chroma may have applied its log in the probe
        self._damage += found
        if not self._repair:
            self._broken |= {d.collection for d in found}
            self._client = None if None in self._broken else self._reopen()
            return
        remove_broken_files(self._directory, found)
        self._client = self._reopen()
        for name in {d.collection for d in found if d.collection is not None}:
            with contextlib.suppress(Exception):  # NotFoundError/ValueError by chromadb version
                self._client.delete_collection(name)
            if name == self._shared:
                self._create(name)  # the store keeps its filter isolation

    def _create(self, name: str) -> Any:
        # embedding_function=None everywhere: Chroma's default one downloads a model.
        return self._client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def _own_names(self) -> list[str]:
        """Names of this store's collections (a server may hold other stores' too)."""
        if self._client is None:  # a broken database left alone (repair=False)
            return []
        names = [c if isinstance(c, str) else c.name for c in self._client.list_collections()]
        return [name for name in names if name.startswith(self._prefix) or name == self._shared]

    @contextmanager
    def _guard(self, write: bool = False) -> Iterator[None]:
        """Hold the thread lock and, on disk, the inter-process lock; reopen a stale client."""
        with self._lock:
            if self._process_lock is None:
                yield
                return
            with self._process_lock.held():
                if self._process_lock.changed():
                    self._refresh()
                if write:
                    # Marked before too: if this process dies mid-write, the next holder reloads
                    # (and checks) the files it left instead of persisting its own stale copy.
                    self._process_lock.mark_written()
                yield
                if write:
                    self._process_lock.mark_written()

    def _refresh(self) -> None:
        # Another process wrote: drop our in-memory HNSW copies and load what is on disk now.
        self._collections.clear()
        self._exact.forget()
        close = getattr(self._client, "close", None)
        if close is not None:
            close()
        known = len(self._damage)
        self._open_checked("files")
        if len(self._damage) > known and self.on_damage is not None:
            self.on_damage()

    def _scope(self, user_id: str) -> str | None:
        """The user to filter on inside a shared collection; None with per-user collections."""
        return user_id if self.isolation == "filter" else None

    def _collection(self, user_id: str, create: bool) -> Any:
        with self._lock:
            key = self._shared if self.isolation == "filter" else user_id
            found = self._collections.get(key)
            if found is not None:
                return found
            name = self._shared if self.isolation == "filter" else collection_name(user_id, self._prefix)
            if create:
                found = self._create(name)
            else:
                try:
                    found = self._client.get_collection(name, embedding_function=None)
                except Exception:  # chromadb raises NotFoundError/ValueError by version
                    return None
            self._collections[key] = found
            return found

    def _on(self, user_id: str, action: Callable[[Any], _T], empty: _T, create: bool = False) -> _T:
        """``action`` on the user's collection, or ``empty`` if it does not exist (or is broken and
        left so). On a server, a handle another process dropped (and perhaps created again) is
        looked up once more."""
        if self._broken and self._broken & {
            None,
            self._shared if self.isolation == "filter" else collection_name(user_id, self._prefix),
        }:
            if create:
                raise StoreError(
                    f"the vector index under {self._directory!r} is damaged "
                    f"({self._damage[0].problem}); `ripplemem check` rebuilds it from SQLite"
                )
            return empty
        collection = self._collection(user_id, create)
        if collection is None:
            return empty
        try:
            return action(collection)
        except Exception as exc:
            if self._process_lock is not None or type(exc).__name__ != "NotFoundError":
                raise
        self._collections.pop(self._shared if self.isolation == "filter" else user_id, None)
        collection = self._collection(user_id, create)
        return empty if collection is None else action(collection)

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Upsert vectors of one user, in Chroma-sized batches."""
        if not len(ids):
            return
        clean = [{k: v for k, v in m.items() if k != "user_id"} for m in metadatas]
        if self.isolation == "filter":
            clean = [{**m, "user_id": user_id} for m in clean]

        with self._guard(write=True), self._mirrored_write(user_id):
            self._on(user_id, lambda collection: upsert(collection, ids, vectors, clean), None, create=True)
            self._exact.added(user_id, ids, vectors, clean)

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user."""
        if not len(ids):
            return
        where = where_clause(None, self._scope(user_id))

        with self._guard(write=True), self._mirrored_write(user_id):
            self._on(user_id, lambda collection: delete(collection, ids, where), None)
            self._exact.removed(user_id, ids)

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """Approximate (HNSW) top-k by cosine similarity."""
        if k <= 0:
            return []
        embeddings = [np.asarray(vector, dtype=np.float32)]
        where = where_clause(flt, self._scope(user_id))
        with self._guard():
            mirror = self._mirror(user_id)
            if mirror is not None:
                return mirror.top_k(embeddings[0], k, flt)
            return self._on(
                user_id, lambda c: nearest(c, embeddings, k, where, self._counter(c, user_id))[0], []
            )

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Approximate top-k for each row of `vectors`, in batched queries."""
        nothing: list[list[tuple[str, float]]] = [[] for _ in range(len(vectors))]
        if k <= 0 or not len(vectors):
            return nothing
        where = where_clause(None, self._scope(user_id))

        with self._guard():
            mirror = self._mirror(user_id)
            if mirror is not None:
                return mirror.top_k_many(vectors, k)
            return self._on(
                user_id, lambda c: nearest_many(c, vectors, k, where, self._counter(c, user_id)), nothing
            )

    def _mirror(self, user_id: str) -> UserMatrix | None:
        """The in-memory copy of the user's collection while it is small, else None (call under
        the guard)."""
        if self.remote or self.isolation == "filter":
            return None
        return self._exact.find(
            user_id,
            count=lambda: self._on(user_id, lambda collection: int(collection.count()), 0),
            read=lambda: self._on(user_id, read_all, NO_ROWS),
        )

    @contextmanager
    def _mirrored_write(self, user_id: str) -> Iterator[None]:
        """A write that fails part way may have reached Chroma in part: the mirror is read again."""
        try:
            yield
        except BaseException:
            self._exact.forget(user_id)
            raise

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        with self._guard():
            return self._on(user_id, lambda collection: self._count(collection, user_id), 0)

    def _count(self, collection: Any, user_id: str) -> int:
        if self.isolation != "filter":
            return int(collection.count())
        return len(all_ids(collection, where_clause(None, self._scope(user_id))))

    def _counter(self, collection: Any, user_id: str) -> Callable[[], int]:
        return lambda: self._count(collection, user_id)

    def ids(self, user_id: str) -> set[str]:
        """The ids of every vector one user has (for consistency checks)."""
        with self._guard():
            where = where_clause(None, self._scope(user_id))
            return self._on(user_id, lambda collection: all_ids(collection, where), set())

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        """This store's per-user collections of no user in `user_ids`, with their vector counts
        (by name: a collection's name does not give its user back)."""
        known = {collection_name(u, self._prefix) for u in user_ids}
        with self._guard():
            return {
                name: int(self._client.get_collection(name, embedding_function=None).count())
                for name in self._own_names()
                if name.startswith(self._prefix) and name not in known and name not in self._broken
            }

    def is_empty(self) -> bool:
        """Whether this store holds no vector here (e.g. a new or wiped server)."""
        with self._guard():
            return all(
                int(self._client.get_collection(name, embedding_function=None).count()) == 0
                for name in self._own_names()
            )

    def drop_all(self) -> None:
        """Delete every vector of this store (its collections only), keeping its isolation."""
        with self._guard(write=True):
            self._collections.clear()
            self._exact.forget()
            for name in self._own_names():
                self._client.delete_collection(name)
            remove_dropped_segments(self._directory)
            if self.isolation == "filter":
                self._create(self._shared)

    def drop_foreign(self, part: str) -> None:
        """Delete one collection foreign() reported, by its name."""
        with self._guard(write=True):
            self._client.delete_collection(part)
            remove_dropped_segments(self._directory)

    def drop(self, user_id: str) -> None:
        """Delete the user's collection."""
        with self._guard(write=True):
            if self.isolation == "filter":
                self._on(user_id, lambda collection: collection.delete(where={"user_id": user_id}), None)
                return
            self._collections.pop(user_id, None)
            self._exact.forget(user_id)
            name = collection_name(user_id, self._prefix)
            # An absent collection raises NotFoundError or ValueError by chromadb version.
            with contextlib.suppress(Exception):
                self._client.delete_collection(name)
            remove_dropped_segments(self._directory)

    def damage(self) -> list[str]:
        """Broken parts found in the files (at open or on a reload) not yet refilled from SQLite."""
        return [str(found) for found in self._damage]

    def clear_damage(self) -> None:
        """Forget the broken parts found: the caller is refilling them from SQLite."""
        self._damage.clear()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the index against every other thread and process (for a consistency check)."""
        with self._guard(write=True):
            yield

    def open_space(self, space: str) -> VectorIndex:
        """Another Chroma index under the store directory (``<store>/modality-index/<space>``), kept
        with this one's isolation; numpy for an in-memory store or one on a server."""
        if self._path is None:
            return NumpyIndex()
        return ChromaIndex(modality_folder(self._path, space), isolation=self.isolation)

    def close(self) -> None:
        """Forget cached collection handles and release an on-disk client and its lock file
        (Chroma persists on every write); a temporary store's collections are dropped."""
        with self._lock:
            if self._temporary:
                self._temporary = False
                for name in self._own_names():
                    with contextlib.suppress(Exception):  # already gone, or the server went away
                        self._client.delete_collection(name)
            self._collections.clear()
            self._exact.forget()
            if self._process_lock is not None:
                close = getattr(self._client, "close", None)
                if close is not None:
                    close()
                self._process_lock.close()
                self._process_lock = None
