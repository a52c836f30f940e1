"""Storage behind small protocols: SQLite is the source of truth, vector indexes beside it."""
