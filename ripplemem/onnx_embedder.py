"""``python -m ripplemem.onnx_embedder [DIR]``, as docs/install.md shows: builds MiniLM's ONNX model.

A public path kept after the move to ``ripplemem.embedding.onnx`` (issue 20), where the code lives.
"""

from ripplemem.embedding.onnx import export_minilm_onnx, main

__all__ = ["export_minilm_onnx", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
