"""LlamaIndex adapters for RippleMem (retriever, tool spec, memory); not yet built.

The adapters arrive with the LlamaIndex issue; until then this package only reserves the name.
"""

__all__: list[str] = []
