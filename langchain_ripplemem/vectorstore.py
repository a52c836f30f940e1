"""RippleMemVectorStore: a LangChain VectorStore whose documents are RippleMem memories, searched by
ripple recall (meaning, keywords and the memory graph) instead of vector similarity alone."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from langchain_ripplemem.scopes import check_memory
from langchain_ripplemem.store_config import embedder_dimension
from ripplemem import (
    FrameworkEmbedder,
    InvalidInputError,
    InvalidTypeError,
    Memory,
    Recall,
    RecallMode,
    RippleMem,
    StoreOptions,
)
from ripplemem.integration import (
    check_k,
    check_mode,
    check_score_threshold,
    check_type,
    handle_embedder,
    held_in_memory,
    memories_by_caller_id,
    memory_metadata,
    nearest_memories,
    stored_vectors,
)

#: The memory metadata key holding a document's LangChain id (hidden from Document.metadata).
ID_KEY = "langchain_id"
RECALL_MODES: tuple[RecallMode, ...] = ("ripple", "hybrid", "dense", "keyword")
_ADD_OPTIONS = ("batch_size",)  # what LangChain's indexing API passes besides ids


class RippleMemVectorStore(VectorStore):
    """A LangChain vector store over one RippleMem user: ``RippleMemVectorStore(memory=mem)``.

    Documents become memories of ``memory_type`` (their metadata kept as given, their id in
    ``metadata["langchain_id"]``); ``similarity_search`` is ``mem.recall(query, mode=mode)``, so it
    also finds the user's other memories and granted knowledge bases (those carry RippleMem's public
    metadata and their memory id). Use ``mode="dense"`` for plain vector-similarity order.
    """

    def __init__(
        self,
        memory: RippleMem,
        *,
        mode: str = "ripple",
        memory_type: str = "semantic",
        embedding: Embeddings | None = None,
    ) -> None:
        self.memory = check_memory(memory)
        self.mode = _check_mode(mode)
        self.memory_type = check_type(memory_type)
        self._embedding = embedding

    @property
    def embeddings(self) -> Embeddings | None:
        """The LangChain embeddings this store was built from (from_texts), else None."""
        return self._embedding

    # -- writes ----------------------------------------------------------------------------------
    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store texts as memories; a text whose id exists replaces that document, a None id gets a
        new one. Returns the ids."""
        _refuse_unknown("add_texts", kwargs, _ADD_OPTIONS)
        if isinstance(texts, str):
            raise InvalidTypeError("texts must be a list of strings, not one string")
        items = list(texts)
        metas = _aligned("metadatas", metadatas, len(items), {})
        given = _aligned("ids", ids, len(items), None)
        chosen = [_check_id(i) if i is not None else uuid.uuid4().hex for i in given]
        named = {doc_id for doc_id, wanted in zip(chosen, given, strict=True) if wanted is not None}
        latest = {doc_id: (text, meta) for doc_id, text, meta in zip(chosen, items, metas, strict=True)}
        new: list[dict[str, Any]] = []
        stored = self._found([doc_id for doc_id in latest if doc_id in named])  # a fresh uuid is new
        for doc_id, (text, meta) in latest.items():
            stored_meta = {**_caller_metadata(meta), ID_KEY: doc_id}
            existing = stored.get(doc_id)
            if existing is None:
                new.append({"content": text, "type": self.memory_type, "metadata": stored_meta})
            else:
                self.memory.update(
                    existing.id, content=None if text == existing.content else text, metadata=stored_meta
                )
        if new:
            self.memory.add_many(new, batch_size=kwargs.get("batch_size", 1024))
        return chosen

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Store documents as memories (see add_texts); a document whose id exists is replaced."""
        return super().add_documents(_document_list(documents), **kwargs)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete the documents with these ids (unknown ids are skipped); True when done."""
        _refuse_unknown("delete", kwargs, ())
        if ids is None:
            raise InvalidInputError(
                "delete needs ids; to remove everything of a user use mem.erase(...) on the RippleMem handle"
            )
        for found in self._found(_id_list(ids)).values():
            self.memory.delete(found.id)
        return True

    # -- reads -----------------------------------------------------------------------------------
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The documents with these ids, in that order; missing ids are left out."""
        wanted = _id_list(ids)
        found = self._found(wanted)
        return [to_document(found[doc_id]) for doc_id in wanted if doc_id in found]

    def similarity_search(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        """The k documents ripple recall ranks best for the query (filter: metadata equality)."""
        return [document for document, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Like similarity_search, with each document's relevance: in [0, 1], comparable across
        queries (Hit.relevance), so ``similarity_score_threshold`` retrievers can cut on it; the
        order is recall's.

        ``mode=`` overrides the store's recall mode for this call.
        """
        _refuse_unknown("similarity_search", kwargs, ("mode",))
        recall = self._recall(query, k, filter, kwargs.get("mode", self.mode))
        return [(to_document(hit.memory), float(hit.relevance)) for hit in recall.hits]

    def similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Documents with their relevance in [0, 1]; ``score_threshold=`` (a number in [0, 1])
        drops those below it, as ``as_retriever(search_type="similarity_score_threshold")`` asks."""
        check_score_threshold(kwargs.get("score_threshold"))
        return super().similarity_search_with_relevance_scores(query, k, **kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        """The k documents of the user nearest a vector of the store's embedder (plain vector order,
        the user's own memories only: recall by text adds keywords, the graph and knowledge bases)."""
        _refuse_unknown("similarity_search_by_vector", kwargs, ())
        vector = self._query_vector(embedding)
        return [
            to_document(m) for m in nearest_memories(self.memory, vector, check_k(k), _checked_filter(filter))
        ]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """k documents among the fetch_k that recall ranks best, each chosen for its similarity to
        the query and its difference from those chosen before (maximal marginal relevance, on the
        stored vectors; lambda_mult 1 = similarity only, 0 = difference only). ``mode=`` as in
        similarity_search_with_score; ``as_retriever(search_type="mmr")`` calls this."""
        _refuse_unknown("max_marginal_relevance_search", kwargs, ("mode",))
        k, fetch_k, lambda_mult = _mmr_options(k, fetch_k, lambda_mult)
        hits = self._recall(query, fetch_k, filter, kwargs.get("mode", self.mode)).hits
        query_vector = handle_embedder(self.memory).embed_query(query)
        return self._diverse([hit.memory for hit in hits], query_vector, k, lambda_mult)

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """Maximal marginal relevance among the fetch_k of the user's documents nearest a vector of
        the store's embedder (see max_marginal_relevance_search and similarity_search_by_vector)."""
        _refuse_unknown("max_marginal_relevance_search_by_vector", kwargs, ())
        k, fetch_k, lambda_mult = _mmr_options(k, fetch_k, lambda_mult)
        vector = self._query_vector(embedding)
        candidates = nearest_memories(self.memory, vector, fetch_k, _checked_filter(filter))
        return self._diverse(candidates, vector, k, lambda_mult)

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """The scores similarity_search_with_score returns are relevances already, in [0, 1]."""
        return _as_is

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        memory: RippleMem | None = None,
        path: str | None = None,
        store: StoreOptions | None = None,
        user_id: str | None = None,
        model_id: str | None = None,
        mode: str = "ripple",
        memory_type: str = "semantic",
        **kwargs: Any,
    ) -> RippleMemVectorStore:
        """A store holding these texts: on ``memory=`` (a RippleMem handle), or on a new RippleMem
        at ``path`` (None: in memory) or on ``store=StoreOptions(...)`` (e.g. a PostgreSQL store,
        ``StoreOptions(backend="postgres", uri=...)``, with no path) for ``user_id`` that embeds
        with ``embedding``.

        ``model_id`` names the embedding model when the object does not (a store on disk records
        it; one in memory is named by the object's class).
        """
        handle = _handle_for("from_texts", embedding, memory, path, store, user_id, model_id)
        vectorstore = cls(handle, mode=mode, memory_type=memory_type, embedding=embedding)
        vectorstore.add_texts(texts, metadatas, ids=ids, **kwargs)
        return vectorstore

    @classmethod
    def from_documents(
        cls,
        documents: list[Document],
        embedding: Embeddings | None,
        *,
        memory: RippleMem | None = None,
        path: str | None = None,
        store: StoreOptions | None = None,
        user_id: str | None = None,
        model_id: str | None = None,
        mode: str = "ripple",
        memory_type: str = "semantic",
        **kwargs: Any,
    ) -> RippleMemVectorStore:
        """A store holding these documents (their ids kept), on ``memory=`` or a new RippleMem, as
        from_texts."""
        handle = _handle_for("from_documents", embedding, memory, path, store, user_id, model_id)
        vectorstore = cls(handle, mode=mode, memory_type=memory_type, embedding=embedding)
        vectorstore.add_documents(documents, **kwargs)
        return vectorstore

    # -- helpers ---------------------------------------------------------------------------------
    def _recall(self, query: str, k: int, filter: dict[str, Any] | None, mode: Any) -> Recall:
        return self.memory.recall(query, k=k, mode=_check_mode(mode), metadata=_checked_filter(filter))

    def _query_vector(self, embedding: Any) -> np.ndarray:
        """A caller's vector as a unit float32 row, checked against the store's embedder."""
        try:
            vector = np.asarray(embedding, dtype=np.float32)
        except (TypeError, ValueError):
            vector = np.zeros(0, dtype=np.float32)
        dimension = embedder_dimension(self.memory)
        if vector.ndim != 1 or len(vector) != dimension or not np.isfinite(vector).all() or not vector.any():
            raise InvalidInputError(
                f"embedding must be a non-zero list of {dimension} numbers (a vector of this store's "
                f"embedder, {self.memory.stats()['embedding_model']!r}), got {embedding!r:.80}"
            )
        return vector / np.linalg.norm(vector)

    def _diverse(
        self, candidates: list[Memory], query: np.ndarray, k: int, lambda_mult: float
    ) -> list[Document]:
        """The k candidates maximal marginal relevance picks, in the order it picks them."""
        if not candidates:
            return []
        vectors = stored_vectors(self.memory, candidates)
        chosen = maximal_marginal_relevance(query, vectors.tolist(), lambda_mult=lambda_mult, k=k)
        return [to_document(candidates[index]) for index in chosen]

    def _found(self, doc_ids: Sequence[str]) -> dict[str, Memory]:
        """The memory of each of these document ids that has one (the newest, if several)."""
        return memories_by_caller_id(self.memory, ID_KEY, doc_ids)


def to_document(memory: Memory) -> Document:
    """A memory as a Document: as it was added (its id, its metadata), or, for a memory written
    another way, with its memory id and RippleMem's public metadata."""
    meta = dict(memory.metadata)
    if ID_KEY in meta:
        doc_id = meta.pop(ID_KEY)
        return Document(id=doc_id, page_content=memory.content, metadata=meta)
    return Document(id=memory.id, page_content=memory.content, metadata=memory_metadata(memory))


def _handle_for(
    method: str,
    embedding: Embeddings | None,
    memory: RippleMem | None,
    path: str | None,
    store: StoreOptions | None,
    user_id: str | None,
    model_id: str | None,
) -> RippleMem:
    """The handle from_texts or from_documents writes to: the one given (its model must be the
    embedding's) or a new one."""
    if memory is not None:
        handle = check_memory(memory)
        if path is not None or store is not None or user_id is not None:
            raise InvalidInputError(f"{method}: pass memory= or path=/store=/user_id=, not both")
        if embedding is not None:
            in_memory = held_in_memory(handle)
            wanted = FrameworkEmbedder(embedding, model_id=model_id, in_memory=in_memory).model_id
            recorded = handle.stats()["embedding_model"]
            if wanted != recorded:
                raise InvalidInputError(
                    f"embedding is {wanted!r} but memory= embeds with {recorded!r}; "
                    "pass embedding=None to use the handle's embedder"
                )
        return handle
    if user_id is None:
        raise InvalidInputError(
            f"{method} needs memory=RippleMem(...) or user_id=... (and path=..., "
            "None for in memory, or store=StoreOptions(...)) for a new store"
        )
    in_memory = path is None and (store is None or store.backend != "postgres")
    embedder = (
        None if embedding is None else FrameworkEmbedder(embedding, model_id=model_id, in_memory=in_memory)
    )
    return RippleMem(path=path, user_id=user_id, embedder=embedder, store=store)


def _as_is(relevance: float) -> float:
    return relevance


def _check_mode(mode: Any) -> RecallMode:
    return check_mode(mode, RECALL_MODES)


def _checked_filter(filter: Any) -> dict[str, Any] | None:
    if filter is not None and not isinstance(filter, dict):
        raise InvalidTypeError(
            f"filter must be a dict of metadata values that must be equal, got {type(filter).__name__}"
        )
    return filter


def _mmr_options(k: Any, fetch_k: Any, lambda_mult: Any) -> tuple[int, int, float]:
    """k and fetch_k positive integers (fetch_k at least k), lambda_mult a number in [0, 1]."""
    k, fetch_k = check_k(k), check_k(fetch_k, "fetch_k")
    if fetch_k < k:
        raise InvalidInputError(f"fetch_k ({fetch_k}) must be at least k ({k}): MMR picks k of fetch_k")
    if (
        isinstance(lambda_mult, bool)
        or not isinstance(lambda_mult, (int, float))
        or not 0 <= lambda_mult <= 1
    ):
        raise InvalidInputError(f"lambda_mult must be a number in [0, 1], got {lambda_mult!r}")
    return k, fetch_k, float(lambda_mult)


def _check_id(doc_id: Any) -> str:
    if not isinstance(doc_id, str) or not doc_id:
        raise InvalidTypeError(f"document ids must be non-empty strings, got {doc_id!r}")
    return doc_id


def _id_list(ids: Any) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Iterable):
        raise InvalidTypeError(f"ids must be a list of strings, got {ids!r}")
    return [_check_id(doc_id) for doc_id in ids]


def _document_list(documents: Any) -> list[Document]:
    # A Document (a pydantic model) iterates over its fields, a string over its letters.
    if isinstance(documents, (str, bytes, dict, Document)) or not isinstance(documents, Iterable):
        raise InvalidTypeError(
            f"documents must be a list of Documents, got {type(documents).__name__}: {documents!r:.80} "
            "(wrap a single one in a list)"
        )
    items = list(documents)
    for position, item in enumerate(items):
        if not isinstance(item, Document):
            raise InvalidTypeError(f"documents[{position}] must be a Document, got {type(item).__name__}")
    return items


def _aligned(name: str, values: list[Any] | None, count: int, default: Any) -> list[Any]:
    if values is None:
        return [default] * count
    if isinstance(values, (str, dict)) or len(values) != count:
        raise InvalidInputError(
            f"{name} must be a list with one entry per text ({count}), got {values!r:.80}"
        )
    return list(values)


def _caller_metadata(meta: Any) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InvalidTypeError(f"metadata must be a dict, got {type(meta).__name__}")
    if ID_KEY in meta:
        raise InvalidInputError(f"metadata key {ID_KEY!r} is reserved for the document id; pass ids= instead")
    return meta


def _refuse_unknown(method: str, kwargs: dict[str, Any], known: Sequence[str]) -> None:
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        accepted = f" (it takes {', '.join(known)})" if known else ""
        raise InvalidInputError(f"{method} got unknown argument(s) {', '.join(unknown)}{accepted}")
