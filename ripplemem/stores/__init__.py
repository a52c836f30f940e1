"""Kept for the one path docs/backends.md tells users to call: ``ripplemem.stores.chroma_health``.

The storage modules live in ``ripplemem.store`` since issue 20.
"""
