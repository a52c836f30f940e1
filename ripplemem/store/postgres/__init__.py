"""The PostgreSQL backend: rows, locks and pgvector vectors in one database."""
