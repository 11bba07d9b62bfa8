#!/usr/bin/env bash
# Builds the local control plane used by conformance.cluster into a cache outside the repo:
#
#   kube-apiserver, kube-controller-manager, kube-scheduler  from tools/kube   (k8s.io/kubernetes)
#   etcd                                                      from tools/etcd   (go.etcd.io/etcd/server/v3)
#   kwok                                                      go install sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION
#
# into ${TC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/training-conformance}/bin/<k8s-version>/.
#
# Idempotent: each binary has a stamp file (.stamps/<name>) recording what it was built from
# (version, go.mod/go.sum/main.go hashes, Go version, flags); a binary whose stamp matches is
# skipped. FORCE=1 rebuilds everything. Pass binary names to build only those:
#
#   hack/build-control-plane.sh                  # all five
#   hack/build-control-plane.sh kube-apiserver   # just one
#
# Environment: TC_CACHE_DIR, KWOK_VERSION (default v0.8.0), FORCE=1, NICE (default 10), JOBS (builds
# at once, default 2: hack/lib/pool.sh),
# GOFLAGS/GOCACHE/GOMODCACHE as usual. Needs Go >= the go directive of tools/*/go.mod
# (GOTOOLCHAIN=local: no toolchain downloads).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
NICE="${NICE:-10}"
export CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:-} -mod=readonly"

die() { echo "[build] ERROR: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found on PATH (Go >= 1.26 is needed)"

module_version() { # <go.mod> <module path> -> version required there
  awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1"
}
K8S_VERSION="$(module_version "$ROOT/tools/kube/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(module_version "$ROOT/tools/etcd/go.mod" go.etcd.io/etcd/server/v3)"
[[ "$K8S_VERSION" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "cannot read k8s.io/kubernetes version from tools/kube/go.mod (got '$K8S_VERSION')"
K8S_MAJOR="${BASH_REMATCH[1]}" K8S_MINOR="${BASH_REMATCH[2]}"
[[ -n "$ETCD_VERSION" ]] || die "cannot read go.etcd.io/etcd/server/v3 version from tools/etcd/go.mod"

CACHE="${TC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/training-conformance}"
OUT="$CACHE/bin/$K8S_VERSION"
STAMPS="$OUT/.stamps"
mkdir -p "$STAMPS"

# Version stamping, the variables hack/lib/version.sh sets (kube::version::ldflags). The tag's
# commit and date come from the module proxy's .info (Origin.Hash is present only when the
# proxy reports it); buildDate is the release time, so rebuilds are reproducible.
info_file="$(cd "$ROOT/tools/kube" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p')"
[[ -f "$info_file" ]] || die "go mod download k8s.io/kubernetes@$K8S_VERSION failed (module proxy reachable?)"
GIT_COMMIT="$(sed -n 's/.*"Hash":"\([0-9a-f]*\)".*/\1/p' "$info_file")"
BUILD_DATE="$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' "$info_file")"
BUILD_DATE="${BUILD_DATE:-1970-01-01T00:00:00Z}"
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$K8S_MAJOR -X $pkg.gitMinor=$K8S_MINOR"
  kube_ldflags+=" -X $pkg.gitCommit=$GIT_COMMIT -X $pkg.gitTreeState=clean -X $pkg.buildDate=$BUILD_DATE"
done
etcd_ldflags="-s -w"
kwok_ldflags="-s -w" # kwok stamps its own version (pkg/consts.Version) in the tagged source

GO_VERSION="$(go env GOVERSION)"
hash_files() { cat "$@" | sha256sum | cut -c1-16; }
stamp_for() { # <name> -> the text its stamp must contain
  case "$1" in
    kube-*) echo "$1 $K8S_VERSION $GO_VERSION $(hash_files "$ROOT/tools/kube/go.mod" "$ROOT/tools/kube/go.sum" "$ROOT/tools/kube/cmd/$1/main.go") $(sha256sum <<<"$kube_ldflags" | cut -c1-16)" ;;
    etcd)   echo "etcd $ETCD_VERSION $GO_VERSION $(hash_files "$ROOT/tools/etcd/go.mod" "$ROOT/tools/etcd/go.sum" "$ROOT/tools/etcd/cmd/etcd/main.go")" ;;
    kwok)   echo "kwok $KWOK_VERSION $GO_VERSION $(sha256sum <<<"$kwok_ldflags" | cut -c1-16)" ;;
  esac
}

ALL=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
targets=("$@"); [[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")
for t in "${targets[@]}"; do [[ " ${ALL[*]} " == *" $t "* ]] || die "unknown binary '$t' (one of: ${ALL[*]})"; done

version_of() { case "$1" in kube-*) echo "$K8S_VERSION";; etcd) echo "$ETCD_VERSION";; kwok) echo "$KWOK_VERSION";; esac; }

build_unit() { # <name...>: builds them (kube-* share one `go build`, which compiles their common
  # packages once) into temporary files, renames them into place and writes their stamps; runs in
  # the background, beside the other units.
  local names=("$@") start=$SECONDS cpu_start cpu tmpdir rc=0 name
  tmpdir="$(mktemp -d "$OUT/.build.XXXXXX")"
  child_cpu "$tmpdir"; cpu_start=$CHILD_CPU
  case "${names[0]}" in
    kube-*) (cd "$ROOT/tools/kube" && nice -n "$NICE" go build -trimpath -ldflags "$kube_ldflags" -o "$tmpdir/" "${names[@]/#/./cmd/}") || rc=$? ;;
    etcd)   (cd "$ROOT/tools/etcd" && nice -n "$NICE" go build -trimpath -ldflags "$etcd_ldflags" -o "$tmpdir/etcd" ./cmd/etcd) || rc=$? ;;
    kwok)   # go install pkg@version: kwok's go.mod has no replace directives, so this is allowed.
            (GOBIN="$tmpdir" GOFLAGS="${GOFLAGS/-mod=readonly/}" nice -n "$NICE" go install -trimpath -ldflags "$kwok_ldflags" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION") || rc=$? ;;
  esac
  child_cpu "$tmpdir"; cpu=$((CHILD_CPU - cpu_start))
  if [[ $rc -ne 0 ]]; then
    rm -rf "$tmpdir"
    echo "[build] ERROR: building ${names[*]} failed after $((SECONDS - start))s (see the go output above)" >&2
    return 1
  fi
  for name in "${names[@]}"; do
    mv -f "$tmpdir/$name" "$OUT/$name"
    stamp_for "$name" > "$STAMPS/$name"
    echo "[build] $name $(version_of "$name") done in $((SECONDS - start))s ($(du -m "$OUT/$name" | cut -f1) MiB)"
  done
  rm -rf "$tmpdir"
  local label="${names[*]}"
  echo "[build] ${label// /, }: ${cpu} CPU-s"
  echo "$(date -u +%FT%TZ) ${label// /+} $(version_of "${names[0]}") seconds=$((SECONDS - start)) cpu_seconds=$cpu bytes=$(cat "${names[@]/#/$OUT/}" | wc -c) gocache=$gocache jobs=$POOL_JOBS" >> "$OUT/build-times.log"
}

source "$ROOT/hack/lib/child-cpu.sh"
source "$ROOT/hack/lib/pool.sh"

total_start=$SECONDS
built=() skipped=() kube=()
for name in "${targets[@]}"; do
  if [[ -z "${FORCE:-}" && -x "$OUT/$name" && -f "$STAMPS/$name" && "$(cat "$STAMPS/$name")" == "$(stamp_for "$name")" ]]; then
    echo "[build] $name $(version_of "$name") up to date ($OUT/$name)"
    skipped+=("$name")
  else
    built+=("$name")
    [[ "$name" == kube-* ]] && kube+=("$name")
  fi
done
# Whether the builds start from an empty Go build cache (a truly cold build) or can reuse packages
# compiled before.
gocache=warm; [[ -n "$(ls -A "$(go env GOCACHE)" 2>/dev/null)" ]] || gocache=empty
# The longest unit first (the kube binaries: ~3/4 of the CPU), the others beside it.
[[ ${#kube[@]} -eq 0 ]] || { echo "[build] ${kube[*]} $K8S_VERSION ... (Go build cache: $gocache)"; pool_run kube build_unit "${kube[@]}"; }
for name in "${built[@]}"; do
  [[ "$name" == kube-* ]] && continue
  echo "[build] $name $(version_of "$name") ... (Go build cache: $gocache)"
  pool_run "$name" build_unit "$name"
done
pool_wait || die "$((SECONDS - total_start))s; see the errors above"

# What the Python side reads to know which versions it runs.
cat > "$OUT/versions.env" <<EOF
KUBERNETES_VERSION=$K8S_VERSION
ETCD_VERSION=$ETCD_VERSION
KWOK_VERSION=$KWOK_VERSION
GO_VERSION=$GO_VERSION
EOF

"$OUT/kube-apiserver" --version >/dev/null 2>&1 && echo "[build] $("$OUT/kube-apiserver" --version)" || true
echo "[build] ${#built[@]} built (${built[*]:-none}), ${#skipped[@]} up to date; total $((SECONDS - total_start))s -> $OUT"
