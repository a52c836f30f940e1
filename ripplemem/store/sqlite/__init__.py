"""The embedded backend: the row store in one SQLite file, its schema, and a second connection for erase."""
