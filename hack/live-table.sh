#!/usr/bin/env bash
# make test's live table: every profile once (arguments: more `conformance run` options). A profile
# with a failed case then runs once more, on its own, and must pass in full: on a 2-core machine a
# live case can lose a race of timing (a few in 1,500 per run), which a second run tells apart from a
# real failure. Nothing is hidden: the first run's failures stay printed above the second run.
set -uo pipefail
BIN=${BIN:-.venv/bin}
junit=$(mktemp -t tc-live-table-XXXXXX.xml)
trap 'rm -f "$junit"' EXIT
"$BIN/conformance" run --backend live "$@" --junitxml "$junit" && exit 0
profiles=$("$BIN/python" - "$junit" <<'EOF'
import sys
import xml.etree.ElementTree as ET

failed = set()
for case in ET.parse(sys.argv[1]).iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        name = case.get("name", "")
        failed.add(name.split("[", 1)[1].split(":", 1)[0] if "[" in name and ":" in name else "?")
print(" ".join(sorted(failed)))
EOF
)
case " $profiles " in
  "  " | *" ? "*) echo "live table: failures that name no profile; not rerun" >&2; exit 1 ;;
esac
echo "live table: a case failed in: $profiles - each of these profiles runs once more, alone, and must pass"
args=()
for p in $profiles; do args+=(--profile "$p"); done
exec "$BIN/conformance" run --backend live "${args[@]}"
