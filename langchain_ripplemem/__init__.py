"""LangChain and LangGraph adapters for RippleMem (retriever, tools, store); not yet built.

The adapters arrive with the LangChain issue; until then this package only reserves the name.
"""

__all__: list[str] = []
