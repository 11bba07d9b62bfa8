# The two commands a fresh machine needs: `make conformance` (the table, render backend) and
# `make test` (every test, live ones included). Both create the virtualenv and install on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: conformance test unit zoo snapshots-update bench list clean mutation mutation-report

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

conformance: $(STAMP)
	$(BIN)/conformance run

# Every test (hack/make-test.sh): unit tests + the table on the render backend and the bug zoo (fails if
# a known-bad variant slips through) while the binaries for the live tests build beside them (once into
# the cache, then a few seconds' stamp check); as soon as the control plane is built, the whole live
# table (every profile; LIVE_PROFILES narrows it) on the local control plane against the render goldens
# (hack/live-table.sh: a profile with a failed case runs once more, alone, and must then pass) and one
# profile again on `realnodes` (stand-in kubelets that never run the cases' images, as kind's) with the
# harness's own pod lifecycle - while the upstream kit still builds; then the live-marked tests (local
# control plane, live backend, upstream kit). The builds' logs: .venv/build-*.log.
LIVE_PROFILES ?=
REALNODES_PROFILE ?= volcano-v1.12
test: $(STAMP)
	BIN=$(BIN) REALNODES_PROFILE=$(REALNODES_PROFILE) hack/make-test.sh $(foreach p,$(LIVE_PROFILES),--profile $(p))

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
	$(BIN)/python bench/restart_bench.py

clean:
	rm -rf $(VENV) build *.egg-info mutants

# Mutation testing of the reference reconciler against the render table (docs/mutation/README.md).
# Not part of `make test`: the whole set is ~19,600 mutants. hack/mutation/run.py is mutmut with a
# runner that judges each mutant's rows without starting pytest again. MODULE narrows it to some
# modules (paths, space-separated: MODULE=reconciler/trainer/plugins/torch.py); results are cached
# under mutants/, so a second run resumes where the first stopped. MUTATION_WORKERS: mutants at once.
MODULE ?=
MUTATION_WORKERS ?= 2
MUTATION_NICE ?= nice -n 19
$(VENV)/.mutmut: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,mutation]'
	touch $@

mutation: $(VENV)/.mutmut
	set -f; globs="$$($(BIN)/python -m hack.mutation.report --glob $(MODULE))" && \
	$(MUTATION_NICE) $(BIN)/python -m hack.mutation.run run --max-children $(MUTATION_WORKERS) $$globs
	$(BIN)/python -m hack.mutation.report

mutation-report: $(VENV)/.mutmut
	$(BIN)/python -m hack.mutation.report

# Local control plane for the live backend (conformance/cluster/). `control-plane` builds the
# binaries into ~/.cache/training-conformance/bin/<k8s version>/ (about 10 min cold on 2 cores).
.PHONY: control-plane cluster-up cluster-down test-live

control-plane:
	hack/build-control-plane.sh

cluster-up: $(STAMP)
	$(BIN)/conformance cluster up

cluster-down: $(STAMP)
	$(BIN)/conformance cluster down

test-live: $(STAMP) control-plane upstream-kit
	$(BIN)/pytest -q -m live tests
	BIN=$(BIN) hack/live-table.sh $(foreach p,$(LIVE_PROFILES),--profile $(p))
	$(BIN)/conformance run --backend live --provider realnodes --pod-lifecycle harness --profile $(REALNODES_PROFILE)

# Upstream kit (conformance/upstream/): the real Trainer (v2.1.0, v2.3.0), JobSet (v0.10.1,
# v0.12.0), Training Operator (v1.8.1, v1.9.2), MPI Operator (v0.6.0), LWS (v0.7.0) and Volcano (v1.10.0:
# vc-webhook-manager, vc-controller-manager, vc-scheduler from one go build) managers and kustomize,
# built from their Go modules (tools/upstream/*) into ~/.cache/training-conformance/upstream/
# (about 22 min cold on 2 busy cores for Trainer + JobSet; see docs/results/README.md). Live check:
# .venv/bin/pytest -m live tests/test_upstream_kit.py (needs make control-plane too).
.PHONY: upstream-kit

upstream-kit:
	hack/build-upstream.sh

# The table against the real upstream operators (conformance/upstream/run.py): for Trainer v2.3.0
# (+ JobSet v0.12.0) and v2.1.0 (+ JobSet v0.10.1), Training Operator v1.9.2 and v1.8.1, MPI Operator
# v0.6.0, LWS v0.7.0, Volcano v1.10.0 (judged by volcano-v1.10, -v1.11 and -v1.12; its plane without the
# volcano-binder stand-in): a local control plane each, the kit installed, `conformance run --backend live
# --operator external` per profile, reports into docs/results/<project>-<version>[-<profile>]/.
.PHONY: upstream-conformance

upstream-conformance: $(STAMP) upstream-kit control-plane
	$(BIN)/python -m conformance.upstream.run
