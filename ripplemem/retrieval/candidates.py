"""The first stage's candidates, as columns the later stages score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.core.types import Memory
from ripplemem.store.tables.memories import row_to_memory


@dataclass
class CandidatePool:
    """First-stage candidates as columns: raw store rows, dense cosines and BM25 scores.

    Memory objects are built only for the hits that are returned (``memory(i)``).
    """

    rows: list[Any]
    dense: np.ndarray
    keyword: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def memory(self, position: int) -> Memory:
        """The candidate at a position as a Memory."""
        return row_to_memory(self.rows[position])
