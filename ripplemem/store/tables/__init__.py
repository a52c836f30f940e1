"""One module per table or table family (SQL in the SQLite dialect both row stores run)."""
