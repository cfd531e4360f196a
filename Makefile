# One entry point for people and CI. `make demo` and `make test` set up .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo test bench container-smoke clean

setup: $(VENV)/.installed

# torch goes first, pinned to the CPU build, so nothing after it pulls the CUDA wheels.
$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q -e '.[test,bench,pyterrier]'
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
