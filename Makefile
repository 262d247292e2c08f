# kernlens developer entry points. `make demo` and `make test` are the README quick start.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet -e '.[fast]' || echo "lark-cython is not available here: the parser runs on pure Lark"
	touch $(STAMP)

# Set up, then check the bundled WMMA example really runs on tensor cores (fp16 in, fp32 accumulate),
# with exact work for its launch (M=48, N=32, K=64 on a 2x3 grid of one-warp blocks).
demo: $(STAMP)
	$(BIN)/validate-kernel examples/ptx/hgemm_wmma.sm_90.ptx --expect 'TENSOR_CORE>=1' --forbid FP32_FMA \
	    --precision-mode cube_fp16in_fp32out --param K=64 --grid 2,3,1 --block 32,1,1

# The whole test suite (what .ci/run executes).
test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
