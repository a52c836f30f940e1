"""Queries of one feature spanning several tables: lifecycle, analysis, erase, revisions."""
