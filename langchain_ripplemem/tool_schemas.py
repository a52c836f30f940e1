"""The argument schemas of the LangChain memory tools: what the model sees of each argument."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

StoredType = Literal["episodic", "semantic"]
RecalledType = Literal["episodic", "semantic", "working", "perceptual", "document"]
MetadataValue = str | int | float | bool | None


class StoreMemoryInput(BaseModel):
    """Arguments of store_memory."""

    content: str = Field(
        description="The memory as one self-contained sentence, e.g. "
        "'The user is allergic to peanuts.' Name people and things explicitly."
    )
    type: StoredType = Field(
        default="episodic",
        description="'semantic' for lasting facts and preferences, "
        "'episodic' for events that happened at a time.",
    )
    importance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="0 to 1; use 0.8 or more for health, safety and things the user asked you to remember.",
    )
    event_time: str | None = Field(
        default=None, description="When it happened, as an ISO date such as '2024-03-15', if known."
    )


class RecallMemoryInput(BaseModel):
    """Arguments of recall_memory."""

    query: str = Field(description="What to look for, in plain words, e.g. 'what the user eats'.")
    k: int = Field(default=5, ge=1, le=20, description="How many memories to return.")
    types: list[RecalledType] | None = Field(
        default=None, description="Only these memory types; leave empty for all."
    )


class UpdateMemoryInput(BaseModel):
    """Arguments of update_memory."""

    memory_id: str = Field(description="The id of the memory to change, as shown by recall_memory.")
    content: str | None = Field(
        default=None,
        description="The corrected memory as one self-contained sentence; leave out to keep the text.",
    )
    type: StoredType | None = Field(default=None, description="A new type: 'semantic' or 'episodic'.")
    importance: float | None = Field(default=None, ge=0.0, le=1.0, description="A new importance, 0 to 1.")
    event_time: str | None = Field(default=None, description="A new date of the event, e.g. '2024-03-15'.")
    metadata: dict[str, MetadataValue] | None = Field(
        default=None, description="Keys to set in the memory's metadata; a key set to null is removed."
    )


class FindConnectionsInput(BaseModel):
    """Arguments of find_connections."""

    source: str = Field(description="A name (person, place, thing) or a memory id from recall_memory.")
    target: str = Field(description="Another name or memory id.")
    max_hops: int = Field(default=3, ge=1, le=6, description="The longest path to look for, in links.")


class ForgetMemoryInput(BaseModel):
    """Arguments of forget_memory."""

    memory_id: str = Field(description="The id of the memory to delete, as shown by recall_memory.")


class EraseMemoryInput(BaseModel):
    """Arguments of erase_memory (an argument it does not know is an error, never ignored)."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str | None = Field(default=None, description="Erase this memory (id from recall_memory).")
    matching: str | None = Field(
        default=None,
        description="Or erase everything this text points to, in "
        "the user's words, e.g. 'my medical condition'.",
    )
    confirm: bool = Field(
        default=False,
        description="false (default): only preview what would be erased. "
        "true: erase for good, only after the user agreed to "
        "the preview.",
    )


class EraseEverythingInput(EraseMemoryInput):
    """Arguments of erase_memory when it may erase all of the user's memories ("forget me")."""

    everything: bool = Field(
        default=False,
        description="true: erase all of the user's memories (only "
        "when the user asks you to forget them entirely).",
    )
