"""Crash recovery and ``ripplemem check``: the consistency check, its report, the repair on open."""
