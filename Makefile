# One entry point for people and CI. `make demo` and `make test` set up .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Where the CPU build of torch comes from. Its one definition is the Dockerfile's `ARG TORCH_INDEX_URL=` default
# (PyPI's torch for Linux is the CUDA build, with gigabytes of dependencies); override with
# `make setup TORCH_INDEX_URL=...`, or set it empty for pip's own settings.
TORCH_INDEX_URL ?= $(shell sed -n 's/^ARG TORCH_INDEX_URL=//p' Dockerfile)

.PHONY: setup demo test bench container-smoke clean

setup: $(VENV)/.installed

# torch goes first, pinned to the CPU build, so nothing after it pulls the CUDA wheels. One quick try at the CPU
# index (an unreachable one costs ~1 s, not the minute and more of pip's default retries; pip's configured
# find-links and extra indexes still apply), then pip's own settings, e.g. a configured mirror with the CPU build.
$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --retries 1 --timeout 15 $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) \
		torch==2.13.0 || { echo "setup: no torch from '$(TORCH_INDEX_URL)'; pip's own settings decide (without" \
		"a CPU wheel there, the CUDA build)" >&2; $(BIN)/pip install -q torch==2.13.0; }
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q -e '.[test,pyterrier]'
	touch $@

demo: setup
	$(BIN)/touche run --output out/demo --overwrite --quiet
	@echo "run: out/demo/run.txt ($$(wc -l < out/demo/run.txt) lines); the top 3 of the first topic:"
	@head -3 out/demo/run.txt
	@$(BIN)/touche validate out/demo

test: setup
	$(BIN)/pytest

bench: setup
	$(BIN)/python -m app.bench

container-smoke: setup
	bash scripts/container-smoke.sh

clean:
	rm -rf $(VENV) out build *.egg-info
