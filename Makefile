# xcc: every target that needs Python creates .venv and installs what it needs first.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
NVCC    ?= nvcc
ARCHS   := sm_80 sm_90
EXAMPLES := $(wildcard examples/*.cu)

.PHONY: all demo test test-fast test-slow lint bench ptx clean install-check regress rebaseline

all: test

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,triton,numba]'
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

# xcc regress over the examples corpus against its committed baseline (CI runs it): any kernel slower, larger
# or wrong fails, with the pass or machine key responsible; reports in build/regress/. A change that alters
# a figure on purpose records the baseline again in the same commit: make rebaseline (docs/regress.md).
REGRESS_CORPUS   := bench/regress/examples.toml
REGRESS_BASELINE := bench/regress/baseline.json
regress: $(STAMP)
	mkdir -p build/regress
	XCC_CACHE_DIR=$${XCC_CACHE_DIR:-$$(mktemp -d)} $(BIN)/xcc regress $(REGRESS_CORPUS) --baseline $(REGRESS_BASELINE) \
	    --attribute --junit build/regress/junit.xml --markdown build/regress/summary.md --html build/regress/report.html

rebaseline: $(STAMP)
	XCC_CACHE_DIR=$${XCC_CACHE_DIR:-$$(mktemp -d)} $(BIN)/xcc regress $(REGRESS_CORPUS) --record $(REGRESS_BASELINE) \
	    --label examples

# Regenerate frontend/ptx_standalone.py (Lark's runtime + the LALR tables of frontend/ptx.lark) after
# editing the grammar; tests/test_parser_tables.py fails while it is out of date.
.PHONY: parser
parser: $(STAMP)
	$(BIN)/python -m xcc.frontend.gen_parser

# Regenerate the examples' PTX (needs nvcc; the PTX is committed so nothing else does).
# Every examples/X.cu gives X.sm_80.ptx and X.sm_90.ptx (-O3); the PTX_RDC stems are compiled
# with -rdc=true (separate compilation); the PTX_SM90A stems (Hopper-only instructions) give only
# X.sm_90a.ptx; the PTX_DEBUG / PTX_LINEINFO stems also give
# X.sm_80.debug.ptx (-G) and X.sm_80.lineinfo.ptx (-lineinfo -O3). Those two embed the absolute
# path of the source file, so they are byte-identical only when regenerated in the same checkout
# directory. Each output is checked with ptxas when it is on PATH (-c for the rdc files).
PTXAS        ?= ptxas
PTX_RDC      := rdc_main rdc_lib
PTX_SM90A    := hopper_pipeline fp8_gemm cluster_dsmem
PTX_DEBUG    := device_functions scan_sort spmv_csr transformer_ops diffusion_ops gemm_simt gemm_tensorcore \
                block_reduce warp_reduce_shfl warp_vote saxpy vector_add_grid_stride transpose_shared \
                histogram_atomic divergent_lanes collatz_steps bit_ops math_f32 math_f64 atomics \
                half_precision mma_shapes barrier_ops async_copy globals_misc fnptr_struct
PTX_LINEINFO := device_functions scan_sort spmv_csr transpose_shared advisor fault_lineinfo

ptx:
	@command -v $(NVCC) >/dev/null || { echo "nvcc not found: the committed PTX is used as is"; exit 0; }; \
	check() { if command -v $(PTXAS) >/dev/null; then $(PTXAS) $$1 -arch=$$2 $$3 -o /dev/null || exit 1; fi; }; \
	for cu in $(EXAMPLES); do stem=$$(basename $$cu .cu); \
	  rdc=""; case " $(PTX_RDC) " in *" $$stem "*) rdc="-rdc=true ";; esac; \
	  archs="$(ARCHS)"; case " $(PTX_SM90A) " in *" $$stem "*) archs=sm_90a;; esac; \
	  for a in $$archs; do out=examples/$$stem.$$a.ptx; \
	    echo "$(NVCC) -ptx $$rdc-arch=$$a -O3 $$cu -o $$out"; \
	    $(NVCC) -ptx $$rdc-arch=$$a -O3 $$cu -o $$out || exit 1; \
	    check "$${rdc:+-c}" $$a $$out; done; done; \
	for stem in $(PTX_DEBUG); do out=examples/$$stem.sm_80.debug.ptx; \
	  echo "$(NVCC) -ptx -G -arch=sm_80 examples/$$stem.cu -o $$out"; \
	  $(NVCC) -ptx -G -arch=sm_80 examples/$$stem.cu -o $$out || exit 1; check "" sm_80 $$out; done; \
	for stem in $(PTX_LINEINFO); do out=examples/$$stem.sm_80.lineinfo.ptx; \
	  echo "$(NVCC) -ptx -lineinfo -O3 -arch=sm_80 examples/$$stem.cu -o $$out"; \
	  $(NVCC) -ptx -lineinfo -O3 -arch=sm_80 examples/$$stem.cu -o $$out || exit 1; check "" sm_80 $$out; done

# Checks that a regular (non-editable) install gives exactly the xcc namespace.
install-check:
	rm -rf build/install-check && $(PY) -m venv build/install-check
	build/install-check/bin/pip install -q .
	build/install-check/bin/python tests/check_install.py

clean:
	rm -rf $(VENV) build dist *.egg-info
