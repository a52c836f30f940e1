"""One store at work: the Engine (ledger, indexes, caches, write lock) and the write path."""
