# graphunits: the two commands of the README.
#   make run   set everything up (idempotent) and run the demo
#   make test  set everything up (idempotent) and run the whole test suite
VENV ?= .venv
PYTEST_ARGS ?=

.PHONY: setup run test clean

setup:
	@./scripts/setup.sh

run: setup
	$(VENV)/bin/graphunits demo

test: setup
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf build .pytest_cache
