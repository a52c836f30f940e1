"""Exceptions raised by RippleMem; every one names the problem and the fix."""

from __future__ import annotations


class RippleMemError(Exception):
    """Base class of every error RippleMem raises on purpose."""


class InvalidInputError(RippleMemError, ValueError):
    """An argument has a value RippleMem cannot accept (the message names the field)."""


class InvalidTypeError(RippleMemError, TypeError):
    """An argument has the wrong Python type (the message names the field)."""


class MemoryNotFoundError(RippleMemError, KeyError):
    """No memory with this id exists in the handle's scope."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "memory not found"


class StoreError(RippleMemError):
    """The store on disk cannot be opened or written as asked."""


class ClosedError(StoreError):
    """The handle (or another handle on the same store) was closed; open the store again."""


class EmbedderOutputError(RippleMemError, ValueError):
    """The embedder returned vectors of the wrong shape or dimension, or NaN/infinite values."""


class SchemaVersionError(StoreError):
    """The store was written by a newer RippleMem than this one."""


class EmbeddingModelMismatchError(StoreError):
    """The store was built with another embedding model than the one configured."""


class MissingDependencyError(RippleMemError, ImportError):
    """An optional package needed for the requested feature is not installed."""


class KnowledgeBaseAccessError(RippleMemError, PermissionError):
    """The knowledge base is not shared with this user (or does not exist: the two look alike)."""


class UserMismatchError(RippleMemError, PermissionError):
    """A handle was asked to act on another user's data (e.g. erase another user)."""
