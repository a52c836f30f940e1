"""Chat models: the protocol and its adapters, answers, query expansion replies, LLM extraction."""
