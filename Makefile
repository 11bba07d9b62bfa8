# The two commands a fresh machine needs: `make conformance` (the table, render backend) and
# `make test` (unit tests + the table). Both create the virtualenv and install on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: conformance test unit zoo snapshots-update bench list clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

conformance: $(STAMP)
	$(BIN)/conformance run

# Every test: unit tests + the table, then the bug zoo (fails if a known-bad variant slips through).
test: $(STAMP)
	$(BIN)/pytest -q
	$(BIN)/conformance zoo

unit: $(STAMP)
	$(BIN)/pytest -q tests

zoo: $(STAMP)
	$(BIN)/conformance zoo

snapshots-update: $(STAMP)
	$(BIN)/conformance run --snapshot-update

list: $(STAMP)
	$(BIN)/conformance list

bench: $(STAMP)
	$(BIN)/python bench/render_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
