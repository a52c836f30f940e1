"""Erase with verification and an audit report (docs/design-notes.md#privacy-and-isolation): one
memory, everything a text points to, or a whole user ("forget me"), through every layer, then a
search of every layer and of the raw files for residues. The report says what went where and whether
anything is left; it holds ids, counts and hashes, never the erased text (only a dry run's preview
shows the texts it would take).

The removal holds the write lock in short batches and the verification runs outside it, so other
users' writes keep moving during a large erase."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from ripplemem.core.validation import check_content
from ripplemem.engine.engine import Engine
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.privacy.scrub import compact_store, remove_everywhere
from ripplemem.privacy.targets import EraseTargets, select_matching, select_memory, select_user
from ripplemem.privacy.verify import verify_erased

# MiniLM cosine of "my medical condition" to medical memories is 0.26-0.36, to unrelated ones <= 0.1.
DEFAULT_MIN_SIMILARITY = 0.25
PREVIEW_CHARS = 120  # of each text in a dry run's summary()


@dataclass
class EraseReport:
    """The audit record of one erase (or its dry-run preview): ids, counts per layer, verification.

    ``request_hash`` is a SHA-256 of the request (mode, user, id or text), so an auditor holding
    the request can match it; the text itself is never kept. Only a dry run fills ``preview`` with
    (id, text) of each memory it would erase, for the person deciding.
    """

    mode: str
    subject: str
    request_hash: str
    dry_run: bool
    started_at: str
    finished_at: str = ""
    memory_ids: list[str] = field(default_factory=list)
    planned: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    compaction: dict[str, Any] = field(default_factory=dict)
    verification: dict[str, Any] = field(default_factory=dict)
    preview: list[tuple[str, str]] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """True when the verification pass found no residue in any layer (False for a dry run)."""
        return bool(self.verification.get("passed"))

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return {**asdict(self), "verified": self.verified}

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON."""
        return json.dumps(self.as_dict(), indent=indent, ensure_ascii=False)

    def summary(self) -> str:
        """A few human-readable lines."""
        what = "would erase" if self.dry_run else "erased"
        lines = [f"{what} {len(self.memory_ids)} memories ({self.mode} request {self.request_hash[:12]})"]
        counts = self.planned if self.dry_run else self.removed
        lines += [f"  {layer}: {count}" for layer, count in counts.items() if count]
        if self.preview:
            lines.append("memories it would erase:")
            lines += [f"  {memory_id}: {_shortened(text)}" for memory_id, text in self.preview]
        if not self.dry_run:
            residues = {k: v for k, v in self.verification.get("residues", {}).items() if v}
            lines.append(
                "verification: no residue in any layer"
                if self.verified
                else f"verification FAILED, residues: {residues}"
            )
        return "\n".join(lines)


def digest(*parts: str) -> str:
    """A SHA-256 over the parts (each length-prefixed, so no two requests collide by concatenation)."""
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


def check_request(memory_id: Any, matching: Any, whole_user: bool, max_chars: int) -> str:
    """The erase mode of a request: exactly one of memory_id, matching or user_id must be given;
    a matching text is capped like a recall query (``max_chars``)."""
    given = [name for name, value in (("memory_id", memory_id), ("matching", matching)) if value is not None]
    if whole_user:
        given.append("user_id")
    if len(given) != 1:
        raise InvalidInputError(
            "erase needs exactly one of memory_id=..., user_id=... (forget me) or "
            f"matching='text'; got {', '.join(given) or 'none'}"
        )
    for name, value in (("memory_id", memory_id), ("matching", matching)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InvalidTypeError(f"{name} must be a non-empty string, got {value!r}")
    if matching is not None:
        check_content(matching, max_chars, field="matching")
    return {"memory_id": "memory", "matching": "matching", "user_id": "user"}[given[0]]


def erase(
    engine: Engine,
    user_id: str,
    *,
    memory_id: str | None = None,
    matching: str | None = None,
    whole_user: bool = False,
    dry_run: bool = False,
    min_similarity: float = DEFAULT_MIN_SIMILARITY,
) -> EraseReport:
    """Erase one memory, what a text points to, or a whole user, through every layer, then verify.

    ``dry_run=True`` returns the preview (ids and per-layer counts) and changes nothing.
    """
    mode = check_request(memory_id, matching, whole_user, engine.settings.max_content_chars)
    if isinstance(dry_run, bool) is False:
        raise InvalidTypeError(f"dry_run must be True or False, got {dry_run!r}")
    if (
        isinstance(min_similarity, bool)
        or not isinstance(min_similarity, (int, float))
        or not 0.0 < min_similarity <= 1.0
    ):
        raise InvalidInputError(f"min_similarity must be a number in (0, 1], got {min_similarity!r}")
    report = EraseReport(
        mode=mode,
        subject=digest("user", user_id),
        request_hash=digest(mode, user_id, memory_id or matching or ""),
        dry_run=dry_run,
        started_at=_now(),
    )
    if mode == "memory":
        targets = select_memory(engine, user_id, memory_id or "")
    elif mode == "matching":
        targets = select_matching(engine, user_id, matching or "", float(min_similarity))
    else:
        targets = select_user(engine, user_id)
    report.memory_ids = list(targets.memory_ids)
    report.planned = planned_counts(targets)
    if dry_run:
        report.preview = list(targets.texts_by_id.items())
    else:
        report.removed = remove_everywhere(engine, targets)
        report.compaction = compact_store(engine)
        report.verification = verify_erased(engine, targets, report.compaction["wal_truncated"]).as_dict()
    report.finished_at = _now()
    return report


def planned_counts(targets: EraseTargets) -> dict[str, int]:
    """What a request would remove, per layer, as counts (the dry-run preview)."""
    return {
        "memories": len(targets.memory_ids),
        "vectors": len(targets.vectors) - len(targets.cold),
        "archive_entries": len(targets.cold),
        "entities_mentioned": len(targets.entity_ids),
        "modality_vectors": sum(len(v) for v in targets.modality_vectors.values()),
        "readings": len(targets.reading_ids),
        "knowledge_bases": len(targets.kb_alone),
        "knowledge_base_grants": len(targets.kb_shared),
    }


def _shortened(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()
