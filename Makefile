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
# Python 3.11 or later is asked first: on 3.10 (Ubuntu 22.04's python3) pip failed after torch, naming a package.
# A venv of another Python is made anew (`venv` over it kept that Python's python links); one of this Python keeps
# its packages, so a failed update leaves it working.
PYTHON_VERSION := import sys; print(*sys.version_info[:2])
$(VENV)/.installed: pyproject.toml requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "setup: '$(PYTHON)' is not" \
		"Python 3.11 or later, which this project needs: make setup PYTHON=python3.11 (or later)" >&2; exit 1; }
	$(PYTHON) -m venv $$([ -x "$(BIN)/python" ] && [ "$$("$(BIN)/python" -c '$(PYTHON_VERSION)')" != \
		"$$($(PYTHON) -c '$(PYTHON_VERSION)')" ] && echo --clear) "$(VENV)"
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
