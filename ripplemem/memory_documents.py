"""RippleMem's document ingestion into knowledge bases and their grants (mixed into the RippleMem facade)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ripplemem.engine import Engine
    from ripplemem.types import Scope


class DocumentMethods:
    """The document ingestion into knowledge bases and their grants methods of a RippleMem handle."""

    _engine: Engine
    scope_info: Scope
    user_id: str
