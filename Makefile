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
	touch $(STAMP)

# Set up, then check the bundled WMMA example really runs on tensor cores with fp16 inputs.
demo: $(STAMP)
	$(BIN)/validate-kernel examples/ptx/hgemm_wmma.sm_90.ptx --expect 'TENSOR_CORE>=1' --forbid FP32_FMA

# The whole test suite (what .ci/run executes).
test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
