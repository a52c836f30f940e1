# Two targets do all the set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_VERBOSITY := error
export ANONYMIZED_TELEMETRY := False

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[all,dev]'
	# One-time export of MiniLM to ONNX (into ~/.cache/ripplemem, or $$RIPPLEMEM_CACHE_DIR).
	$(PY) -m ripplemem.onnx_embedder
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ripplemem demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/embedders.py --rounds 3
	$(PY) benchmarks/chinese_keywords.py
	$(PY) benchmarks/locomo.py

clean:
	rm -rf $(VENV) .pytest_cache
