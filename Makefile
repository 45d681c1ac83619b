# graphunits: the two commands of the README.
#   make run   set everything up (idempotent) and run the demo
#   make test  set everything up (idempotent) and run the whole test suite
VENV ?= .venv
# Test workers (pytest-xdist): one per core, at most 4 (each Verilator build takes
# memory); `make test JOBS=1` runs the suite in one process.
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
PYTEST_ARGS ?= $(if $(filter-out 1,$(JOBS)),-n $(JOBS))

.PHONY: setup run test coverage funcov clean

setup:
	@./scripts/setup.sh

run: setup
	$(VENV)/bin/graphunits demo

# The project's bytecode is compiled first: each cocotb run is a new Python process that
# imports the units' modules, and where PYTHONDONTWRITEBYTECODE is set (as on the
# development VM) every one of them compiled them from source, about 0.1 s a run.
test: setup
	@$(VENV)/bin/python -m compileall -q -j 0 golden hw sim synth graphunits >/dev/null
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

# Line, branch and toggle coverage of the RTL tests on Verilator (docs/verification.md).
coverage: setup
	$(VENV)/bin/python scripts/coverage.py --run --json build/coverage/summary.json

# Functional coverage of the RTL tests: each unit's cover bins reached (docs/verification.md).
funcov: setup
	$(VENV)/bin/python scripts/funcov.py --run --json build/funcov/summary.json

clean:
	rm -rf build .pytest_cache
