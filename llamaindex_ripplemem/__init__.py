"""LlamaIndex adapters for RippleMem: a retriever, an agent tool spec, a chat memory and a memory block.

```python
from ripplemem import RippleMem
from llamaindex_ripplemem import RippleMemMemory, RippleMemRetriever, RippleMemToolSpec

mem = RippleMem(path="./memdb", user_id="alice")
retriever = RippleMemRetriever(memory=mem, similarity_top_k=10)      # query engines, retriever tools
tools = RippleMemToolSpec(memory=mem).to_tool_list()                # FunctionAgent / ReActAgent tools
memory = RippleMemMemory(memory=mem, session_id="s1")               # agent.run(msg, memory=memory)
```
"""

from ripplemem import MissingDependencyError

try:
    import llama_index.core  # noqa: F401  (every adapter below is built on it)
except ImportError as error:
    raise MissingDependencyError(
        f"llamaindex_ripplemem needs {error.name or 'llama-index-core'}: pip install 'ripplemem[llamaindex]'"
    ) from error

from llamaindex_ripplemem.memory import RippleMemMemory
from llamaindex_ripplemem.memory_block import RippleMemMemoryBlock
from llamaindex_ripplemem.retriever import RippleMemRetriever
from llamaindex_ripplemem.tool_spec import RippleMemToolSpec
from llamaindex_ripplemem.vector_store import RippleMemVectorStore

__all__ = ["RippleMemMemory", "RippleMemMemoryBlock", "RippleMemRetriever", "RippleMemToolSpec"]
__all__ += ["RippleMemVectorStore"]
