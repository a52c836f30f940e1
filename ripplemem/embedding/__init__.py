"""Embedders: the protocol, MiniLM on ONNX, the named text models, "auto", framework wrappers, media."""
