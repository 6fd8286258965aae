# xcc: every target that needs Python creates .venv and installs what it needs first.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
NVCC    ?= nvcc
ARCHS   := sm_80 sm_90
EXAMPLES := $(wildcard examples/*.cu)

.PHONY: all demo test test-fast test-slow lint bench ptx clean install-check

all: test

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	XCC_CACHE_DIR=$$(mktemp -d) $(BIN)/python -m pytest -q -m "not slow" tests

test-slow: $(STAMP)
	XCC_CACHE_DIR=$$(mktemp -d) $(BIN)/python -m pytest -q -m slow tests || [ $$? -eq 5 ]

lint: $(STAMP)
	$(BIN)/ruff check compiler frontend passes backend runtime_stub tests bench examples

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Regenerate the examples' PTX (needs nvcc; the PTX is committed so nothing else does).
ptx:
	@command -v $(NVCC) >/dev/null || { echo "nvcc not found: the committed PTX is used as is"; exit 0; }
	@for cu in $(EXAMPLES); do for a in $(ARCHS); do \
	  out=$${cu%.cu}.$$a.ptx; echo "nvcc -ptx -arch=$$a $$cu -o $$out"; \
	  $(NVCC) -ptx -arch=$$a -O3 $$cu -o $$out || exit 1; done; done

# Checks that a regular (non-editable) install gives exactly the xcc namespace.
install-check:
	rm -rf build/install-check && $(PY) -m venv build/install-check
	build/install-check/bin/pip install -q .
	build/install-check/bin/python tests/check_install.py

clean:
	rm -rf $(VENV) build dist *.egg-info
