"""RippleMemMemory: the legacy ``BaseMemory`` for pre-1.0 chains (needs ``ripplemem[langchain-classic]``).

Legacy: LangChain deprecated ``BaseMemory``; new code should use ``RippleMemMiddleware`` with
``create_agent``, or ``RippleMemRetriever`` in an LCEL chain.
"""

from __future__ import annotations

from typing import Any

from langchain_classic.base_memory import BaseMemory
from pydantic import ConfigDict, SkipValidation

from langchain_ripplemem.scopes import check_memory
from langchain_ripplemem.turns import observe_exchange
from ripplemem import InvalidInputError, RecallMode, RippleMem
from ripplemem.integration import RECALL_MODES, check_k, check_mode


class RippleMemMemory(BaseMemory):
    """Memory for old chains (ConversationChain, LLMChain): recalled and recent turns in ``{history}``.

    ``load_memory_variables`` recalls memories for the input and adds the session's working memory;
    ``save_context`` observes the input and the output into working memory ("remember that ..." is
    stored long-term at once); ``clear`` empties working memory only, never long-term memory.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    """The RippleMem handle (its user, and its session for working memory)."""
    memory_key: str = "history"
    """The prompt variable the memories fill."""
    input_key: str | None = None
    """The input that is the user's message; by default the only input that is not a memory key."""
    output_key: str | None = None
    """The output that is the answer; by default the only output."""
    k: int = 8
    mode: RecallMode = "ripple"
    token_budget: int = 400
    working_token_budget: int = 300

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        for name in ("k", "token_budget", "working_token_budget"):
            if name in data:
                check_k(data[name], name)
        if "mode" in data:
            check_mode(data["mode"], RECALL_MODES)
        super().__init__(**data)

    @property
    def memory_variables(self) -> list[str]:
        """The one variable this memory fills: ``memory_key``."""
        return [self.memory_key]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """``{memory_key: text}``: memories recalled for the input, then the recent turns."""
        query = str(inputs[self._input_key(inputs)])
        parts = []
        if query.strip():
            recall = self.memory.recall(query, k=self.k, mode=self.mode)
            parts.append(recall.context(self.token_budget))
        parts.append(self.memory.working().context(self.working_token_budget))
        return {self.memory_key: "\n\n".join(part for part in parts if part)}

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Observe the user's input and the chain's answer into working memory."""
        observe_exchange(
            self.memory,
            str(inputs[self._input_key(inputs)]),
            str(outputs[self._output_key(outputs)]),
            source="langchain-classic",
        )

    def clear(self) -> None:
        """Empty this session's working memory (long-term memories stay; delete those with the tools)."""
        self.memory.working().clear()

    def _input_key(self, inputs: dict[str, Any]) -> str:
        if self.input_key is not None:
            if self.input_key not in inputs:
                raise InvalidInputError(
                    f"input_key {self.input_key!r} is not among the inputs {sorted(inputs)}"
                )
            return self.input_key
        keys = [key for key in inputs if key not in (self.memory_key, "stop")]
        if len(keys) != 1:
            raise InvalidInputError(
                f"cannot tell which input is the user's message among {sorted(keys)}; "
                "pass input_key= to RippleMemMemory"
            )
        return keys[0]

    def _output_key(self, outputs: dict[str, Any]) -> str:
        if self.output_key is not None:
            if self.output_key not in outputs:
                raise InvalidInputError(
                    f"output_key {self.output_key!r} is not among the outputs {sorted(outputs)}"
                )
            return self.output_key
        if len(outputs) != 1:
            raise InvalidInputError(
                f"cannot tell which output is the answer among {sorted(outputs)}; "
                "pass output_key= to RippleMemMemory"
            )
        return next(iter(outputs))
