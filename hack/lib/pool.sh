# Sourced by the build scripts: runs builds side by side, at most JOBS (default 2, one per core of
# the 2-core machine this suite is sized for) at once. A single `go build` keeps both cores busy only
# while it compiles; its module downloads and its link are one process, so two builds at once
# finish sooner than one after the other.
#
#   pool_run <label> <command...>   start the command in the background once a slot is free
#   pool_wait                       wait for every started command; non-zero (naming them) if any failed
POOL_JOBS="${JOBS:-2}"
[[ "$POOL_JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "JOBS must be a positive number (got '$POOL_JOBS')" >&2; exit 1; }
POOL_PIDS=() POOL_LABELS=()
pool_run() {
  local label="$1"; shift
  while (( $(jobs -rp | wc -l) >= POOL_JOBS )); do wait -n || true; done
  "$@" &
  POOL_PIDS+=("$!") POOL_LABELS+=("$label")
}
pool_wait() {
  local i failed=()
  # bash keeps the status of a job that `wait -n` already reaped, so each is read here once more
  for i in "${!POOL_PIDS[@]}"; do wait "${POOL_PIDS[$i]}" || failed+=("${POOL_LABELS[$i]}"); done
  POOL_PIDS=() POOL_LABELS=()
  [[ ${#failed[@]} -eq 0 ]] || { echo "failed: ${failed[*]}" >&2; return 1; }
}
