# warp_lab's two entry points (see README.md):
#   make lab    JupyterLab on the teaching notebooks (CPU simulator when there is no GPU)
#   make test   the whole test suite (what CI runs), one pytest-xdist worker per core;
#               PYTEST_ARGS adds pytest options: make test PYTEST_ARGS="-k cache -n 0"
# Both create .venv and install what they need on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test browser-deps clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $(STAMP)

# Debian's chromium for the browser tests; without root or apt they skip with a reason.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: browser tests will be skipped"; \
	  else echo "chromium missing and no root: browser tests will be skipped"; fi; }

# --allow-root only where we are root (containers, CI-like machines)
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root)

# --dist loadgroup: the tests of one xdist_group share a worker (tests/conftest.py says
# which). pytest's exit code 5 (no test collected: a PYTEST_ARGS that selects nothing) is
# no success and no pytest failure either: it leaves as 1, with the reason.
test: $(STAMP) browser-deps
	rc=0; $(BIN)/python -m pytest -n auto --dist loadgroup --durations=15 $(PYTEST_ARGS) \
	  || rc=$$?; \
	if [ $$rc = 5 ]; then echo "make test: pytest collected no test"; exit 1; fi; exit $$rc

clean:
	rm -rf $(VENV) build dist warp_lab/labextension extension/lib extension/node_modules
