#!/usr/bin/env bash
# `make test`'s order of work (arguments: more options for the live table's `conformance run`).
#
# On a fresh machine the Go builds are most of the time (control plane ~720 CPU-s, upstream kit
# ~1,450 CPU-s on 2 cores), so each test starts as soon as what it needs exists, while the rest
# builds beside it at nice 10 (a test process at nice 0 gets the cores first):
#
#   1. the control plane's and the upstream kit's builds start in the background, side by side
#      (each two `go build`s at a time; module downloads and links leave cores idle that another
#      build's compile fills); the kit at nice 15, so the control plane, which the long live table
#      waits for, gets the cores first;
#   2. unit tests + the render table, then the bug zoo;
#   3. once the control plane is built: the whole live table (hack/live-table.sh) and one profile
#      on stand-in kubelets (`realnodes`) - these use the reference operators only;
#   4. the live-marked tests that need no upstream build (local control plane, live backend), still
#      beside the kit's build; once the kit is built, its own live tests (tests/test_upstream_kit.py,
#      which start the upstream managers).
#
# With warm caches the builds are a few seconds of stamp checks and the order is the same.
# The first failing step ends the run (non-zero); a failed build's log is printed in full.
set -uo pipefail
BIN=${BIN:-.venv/bin}
LOGS=${BUILD_LOG_DIR:-.venv}
REALNODES_PROFILE=${REALNODES_PROFILE:-volcano-v1.12}
cp_log=$LOGS/build-control-plane.log
kit_log=$LOGS/build-upstream-kit.log

# Each build runs in its own process group, so stopping the run stops its go builds too.
set -m
hack/build-control-plane.sh >"$cp_log" 2>&1 &
cp_pid=$!
NICE=${KIT_NICE:-15} hack/build-upstream.sh >"$kit_log" 2>&1 &
kit_pid=$!
set +m
stop_builds() { kill -- -"$cp_pid" -"$kit_pid" 2>/dev/null; }
trap 'stop_builds; exit 130' INT TERM
echo "make test: the control plane and the upstream kit build in the background (logs: $cp_log, $kit_log)"

# wait_build PID LOG WHAT: waits for one build, prints its log, fails if it failed.
wait_build() {
  wait "$1"
  local rc=$?
  cat "$2"
  [ "$rc" -eq 0 ] || echo "make test: $3 failed (rc $rc; log above, also in $2)" >&2
  return "$rc"
}
# fail MESSAGE: ends the run; the builds still running are stopped.
fail() {
  echo "make test: $1" >&2
  stop_builds
  exit 1
}

"$BIN/pytest" -q || fail "the unit tests or the render table failed"
"$BIN/conformance" zoo || fail "the bug zoo failed"

wait_build "$cp_pid" "$cp_log" "the control plane's build" || fail "no control plane, so no live test ran"
BIN=$BIN hack/live-table.sh "$@" || fail "the live table failed"
"$BIN/conformance" run --backend live --provider realnodes --pod-lifecycle harness \
  --profile "$REALNODES_PROFILE" || fail "the realnodes run ($REALNODES_PROFILE) failed"

kit_tests=tests/test_upstream_kit.py
"$BIN/pytest" -q -m live tests --ignore "$kit_tests" || fail "the live tests failed"
wait_build "$kit_pid" "$kit_log" "the upstream kit's build" || fail "no upstream kit, so its live tests did not run"
"$BIN/pytest" -q -m live "$kit_tests" || fail "the upstream kit's live tests failed"
echo "make test: everything passed"
