"""The environment the command line sets before any model library loads."""

from __future__ import annotations

import os


def quiet_third_party() -> None:
    """Silence model-loading progress bars and info logs; call before any model library loads."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
