#!/usr/bin/env bash
# Builds the upstream operators that conformance.upstream runs against the local control plane,
# each from its published Go module through a wrapper module in tools/upstream/<project>-v<x.y>/:
#
#   go.mod     `tool <main package>` and exactly the upstream go.mod's versions
#   build.env  BINARY=<file name>, LDFLAGS=<-X flags> ($VERSION, $COMMIT, $RELEASED of the release,
#              from the module proxy), and optionally REQUIRES=<module path>: a module whose
#              version in this build list must have a wrapper of its own (Trainer -> the JobSet
#              release it pins, so the pair conformance.upstream starts is the pair upstream tested)
#
#   tools/upstream/trainer-v2.3            github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
#   tools/upstream/trainer-v2.1            (same package, older release)
#   tools/upstream/jobset-v0.12            sigs.k8s.io/jobset   (main.go at the module root)
#   tools/upstream/jobset-v0.10
#   tools/upstream/training-operator-v1.9  github.com/kubeflow/training-operator/cmd/training-operator.v1
#   tools/upstream/training-operator-v1.8
#   tools/upstream/mpi-operator-v0.6       github.com/kubeflow/mpi-operator/cmd/mpi-operator
#   tools/upstream/lws-v0.7                sigs.k8s.io/lws/cmd   (cmd/main.go)
#   tools/upstream/kustomize               sigs.k8s.io/kustomize/kustomize/v5 (renders their manifests)
#
# into ${TC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/training-conformance}/upstream/<project>-<version>/,
# e.g. upstream/trainer-v2.3.0/trainer-controller-manager. Each directory also gets source.env:
# the module, version, commit and module-cache directory (where the CRDs and webhook manifests
# are read from at install time; nothing is copied into the repo), and <PROJECT>_VERSION=<version> of
# each project it REQUIRES (e.g. JOBSET_VERSION=v0.12.0 for a Trainer release).
# What to do with a build (manifests, manager flags, profiles) is conformance/upstream/projects.py.
#
# Idempotent: a binary whose stamp (.stamp: version, go.mod/go.sum hash, Go version, ldflags)
# matches is skipped; FORCE=1 rebuilds. Pass module directory names to build only those:
#
#   hack/build-upstream.sh                           # all
#   hack/build-upstream.sh trainer-v2.3 jobset-v0.12 kustomize
#
# Environment: TC_CACHE_DIR, FORCE=1, NICE (default 10), JOBS (builds at once, default 2:
# hack/lib/pool.sh), GOFLAGS/GOCACHE/GOMODCACHE as usual.
# GOTOOLCHAIN=local: the go directives of tools/upstream/*/go.mod must be met by the local Go.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/tools/upstream"
NICE="${NICE:-10}"
export CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:-} -mod=readonly"

die() { echo "[upstream] ERROR: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found on PATH (Go >= 1.26 is needed)"

CACHE="${TC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/training-conformance}/upstream"
mkdir -p "$CACHE"
GO_VERSION="$(go env GOVERSION)"
# Whether the first build starts from an empty Go build cache (a cold build), looked at before
# any go command below writes to it; every later build in this run profits from the earlier ones.
gocache=warm; [[ -n "$(ls -A "$(go env GOCACHE)" 2>/dev/null)" ]] || gocache=empty

ALL=()
for d in "$TOOLS"/*/; do d="${d%/}"; [[ -f "$d/go.mod" ]] && ALL+=("${d##*/}"); done
targets=("$@"); [[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")
for t in "${targets[@]}"; do [[ " ${ALL[*]} " == *" $t "* ]] || die "unknown module '$t' (one of: ${ALL[*]})"; done

tool_package() { sed -n 's/^tool[[:space:]]\+\([^[:space:]]*\)$/\1/p' "$TOOLS/$1/go.mod"; }
module_of() { # <dir> <package> -> "<module path> <version>"
  (cd "$TOOLS/$1" && go list -f '{{.Module.Path}} {{.Module.Version}}' "$2")
}
dep_version() { # <dir> <module path> -> version selected in that module's build list
  (cd "$TOOLS/$1" && go list -m -f '{{.Version}}' "$2")
}
build_env() { # <dir> <key> -> the value in tools/upstream/<dir>/build.env (empty when unset)
  [[ -f "$TOOLS/$1/build.env" ]] || die "tools/upstream/$1 has no build.env (BINARY=, LDFLAGS=)"
  sed -n "s/^$2=//p" "$TOOLS/$1/build.env" | tail -1
}
provides() { # <dir> <module path> -> true when the wrapper in <dir> builds a package of that module
  local pkg; pkg="$(tool_package "$1")"
  [[ "$pkg" == "$2" || "$pkg" == "$2/"* ]]
}

# Pairing: every module a wrapper REQUIRES, at the version its build list selects, has a wrapper.
for t in "${ALL[@]}"; do
  req="$(build_env "$t" REQUIRES)"
  [[ -n "$req" ]] || continue
  want="$(dep_version "$t" "$req")"
  found=""
  for j in "${ALL[@]}"; do
    [[ "$j" != "$t" ]] && provides "$j" "$req" && [[ "$(dep_version "$j" "$req")" == "$want" ]] && found="$j"
  done
  [[ -n "$found" ]] || die "tools/upstream/$t requires $req $want, but no other tools/upstream/* module builds that version"
done

source "$ROOT/hack/lib/child-cpu.sh"
source "$ROOT/hack/lib/pool.sh"

build_one() { # <kind> <version> <pkg> <dir> <out> <name> <ldflags> <stamp>; runs in the background
  local kind="$1" version="$2" pkg="$3" dir="$4" out="$5" name="$6" ldflags="$7" want="$8"
  local start=$SECONDS cpu_start cpu tmp="$out/.$name.tmp.$BASHPID"
  child_cpu "$out"; cpu_start=$CHILD_CPU
  if ! (cd "$TOOLS/$dir" && nice -n "$NICE" go build -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg"); then
    rm -f "$tmp"
    echo "[upstream] ERROR: building $kind $version failed after $((SECONDS - start))s (see the go output above)" >&2
    return 1
  fi
  mv -f "$tmp" "$out/$name"
  echo "$want" > "$out/.stamp"
  child_cpu "$out"; cpu=$((CHILD_CPU - cpu_start))
  echo "[upstream] $kind $version done in $((SECONDS - start))s, ${cpu} CPU-s ($(du -m "$out/$name" | cut -f1) MiB)"
  echo "$(date -u +%FT%TZ) $kind $version seconds=$((SECONDS - start)) cpu_seconds=$cpu bytes=$(stat -c %s "$out/$name") gocache=$gocache go=$GO_VERSION jobs=$POOL_JOBS" >> "$CACHE/build-times.log"
}

total_start=$SECONDS
built=() skipped=()
for dir in "${targets[@]}"; do
  pkg="$(tool_package "$dir")"
  [[ -n "$pkg" ]] || die "tools/upstream/$dir/go.mod has no single 'tool' line"
  read -r module version < <(module_of "$dir" "$pkg") || die "go list $pkg failed in tools/upstream/$dir"
  kind="${dir%%-v*}"
  name="$(build_env "$dir" BINARY)"
  [[ -n "$name" ]] || die "tools/upstream/$dir/build.env names no BINARY"
  out="$CACHE/$kind-$version"
  mkdir -p "$out"

  # The release's commit and time from the module proxy's .info (Origin is present when the
  # proxy reports it), for version stamping and source.env; the download also verifies go.sum.
  dl="$(cd "$TOOLS/$dir" && go mod download -json "$module@$version")" || die "go mod download $module@$version failed (module proxy reachable?)"
  field() { sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",\$/\\1/p" <<<"$dl" | head -1; }
  info_file="$(field Info)" mod_dir="$(field Dir)"
  [[ -d "$mod_dir" ]] || die "go mod download $module@$version gave no module directory"
  commit="$(sed -n 's/.*"Hash": *"\([0-9a-f]*\)".*/\1/p' "$info_file")"
  released="$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' "$info_file")"

  ldflags="-s -w" extra="$(build_env "$dir" LDFLAGS)"
  extra="${extra//\$VERSION/$version}" extra="${extra//\$COMMIT/${commit:-unknown}}"
  extra="${extra//\$RELEASED/${released:-unknown}}"
  [[ -z "$extra" ]] || ldflags+=" $extra"

  want="$name $version $GO_VERSION $(cat "$TOOLS/$dir/go.mod" "$TOOLS/$dir/go.sum" | sha256sum | cut -c1-16) $(sha256sum <<<"$ldflags" | cut -c1-16)"
  if [[ -z "${FORCE:-}" && -x "$out/$name" && -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$want" ]]; then
    echo "[upstream] $kind $version up to date ($out/$name)"
    skipped+=("$kind-$version")
  else
    echo "[upstream] $kind $version ($pkg) ... (Go build cache: $gocache; $POOL_JOBS builds at once)"
    pool_run "$kind-$version" build_one "$kind" "$version" "$pkg" "$dir" "$out" "$name" "$ldflags" "$want"
    built+=("$kind-$version") gocache=warm
  fi

  # What conformance.upstream reads: which binary, and where the release's manifests are.
  {
    echo "NAME=$kind"
    echo "MODULE=$module"
    echo "VERSION=$version"
    echo "COMMIT=$commit"
    echo "BINARY=$out/$name"
    echo "MODULE_DIR=$mod_dir"
    req="$(build_env "$dir" REQUIRES)"
    if [[ -n "$req" ]]; then
      for j in "${ALL[@]}"; do
        # e.g. JOBSET_VERSION=v0.12.0: the version of the required project this release pins
        provides "$j" "$req" && { k="${j%%-v*}"; k="${k^^}"; echo "${k//-/_}_VERSION=$(dep_version "$dir" "$req")"; break; }
      done
    fi
    echo "GO_VERSION=$GO_VERSION"
  } > "$out/source.env"
done
pool_wait || die "$((SECONDS - total_start))s; see the errors above"

echo "[upstream] ${#built[@]} built (${built[*]:-none}), ${#skipped[@]} up to date; total $((SECONDS - total_start))s -> $CACHE"
