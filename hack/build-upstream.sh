#!/usr/bin/env bash
# Builds the upstream operators that conformance.upstream runs against the local control plane,
# each from its published Go module through a wrapper module in tools/upstream/<project>-v<x.y>/:
#
#   go.mod     `tool <main package>` (or a `tool ( ... )` block of several) and exactly the upstream
#              go.mod's versions
#   build.env  BINARY=<file name> for the one tool package, or BINARIES=<file>=<package> ... for
#              several (each package one of the tool lines; all built by one `go build`, so the
#              packages they share compile once), LDFLAGS=<-X flags> ($VERSION, $COMMIT, $RELEASED of
#              the release, from the module proxy), and optionally REQUIRES=<module path>: a module whose
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
#   tools/upstream/volcano-v1.10           volcano.sh/volcano/cmd/{controller-manager,webhook-manager,scheduler}
#                                          (vc-controller-manager, vc-webhook-manager, vc-scheduler)
#   tools/upstream/kustomize               sigs.k8s.io/kustomize/kustomize/v5 (renders their manifests)
#
# into ${TC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/training-conformance}/upstream/<project>-<version>/,
# e.g. upstream/trainer-v2.3.0/trainer-controller-manager. Each directory also gets source.env:
# the module, version, commit and module-cache directory (where the CRDs and webhook manifests
# are read from at install time; nothing is copied into the repo), BINARY (the first binary's path)
# and BINARIES (every binary's file name, beside source.env), and <PROJECT>_VERSION=<version> of
# each project it REQUIRES (e.g. JOBSET_VERSION=v0.12.0 for a Trainer release).
# What to do with a build (manifests, manager flags, profiles) is conformance/upstream/projects.py.
#
# Idempotent: a build whose stamp (.stamp: its binaries' names, version, go.mod/go.sum hash, Go
# version, ldflags) matches and whose binaries are all there is skipped; FORCE=1 rebuilds. Pass module directory names to build only those:
#
#   hack/build-upstream.sh                           # all
#   hack/build-upstream.sh trainer-v2.3 jobset-v0.12 kustomize
#
# Environment: TC_CACHE_DIR, FORCE=1, NICE (default 10), JOBS (builds at once, default 2:
# hack/lib/pool.sh), GOFLAGS/GOCACHE/GOMODCACHE as usual; TC_UPSTREAM_TOOLS (default
# tools/upstream: the wrapper modules, for the script's own tests).
# GOTOOLCHAIN=local: the go directives of tools/upstream/*/go.mod must be met by the local Go.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${TC_UPSTREAM_TOOLS:-$ROOT/tools/upstream}"
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

tool_packages() { # <dir> -> its go.mod's tool packages, one a line (`tool pkg` lines and `tool ( ... )` blocks)
  awk '/^tool[[:space:]]*\($/ { block = 1; next }
       block && /^\)/ { block = 0; next }
       block && NF { print $1; next }
       /^tool[[:space:]]+[^([:space:]]+[[:space:]]*$/ { print $2 }' "$TOOLS/$1/go.mod"
}
exe_name() { # <package> -> the file name `go build -o dir/` gives it: the last path element, not a /vN suffix
  local p="$1"; [[ "${p##*/}" =~ ^v[0-9]+$ ]] && p="${p%/*}"; echo "${p##*/}"
}
binaries() { # <dir> -> "<file name> <package>" a line, from build.env BINARIES= (several) or BINARY= (the one tool)
  local names pairs tools pair name pkg
  names="$(build_env "$1" BINARY)" pairs="$(build_env "$1" BINARIES)" tools="$(tool_packages "$1")"
  [[ -z "$names" || -z "$pairs" ]] || die "tools/upstream/$1/build.env has both BINARY= and BINARIES=; name one or the other"
  if [[ -n "$pairs" ]]; then
    for pair in $pairs; do
      name="${pair%%=*}" pkg="${pair#*=}"
      [[ "$pair" == *=* && -n "$name" && -n "$pkg" ]] || die "tools/upstream/$1/build.env BINARIES: '$pair' is not <file name>=<package>"
      grep -qxF "$pkg" <<<"$tools" || die "tools/upstream/$1/build.env BINARIES: $pkg is not a tool line of its go.mod (tools: $(tr '\n' ' ' <<<"$tools"))"
      echo "$name $pkg"
    done
  else
    [[ -n "$names" ]] || die "tools/upstream/$1/build.env names no BINARY (or BINARIES)"
    [[ -n "$tools" && "$(wc -l <<<"$tools")" -eq 1 ]] || die "tools/upstream/$1/go.mod has no single 'tool' line for BINARY=$names (several: use BINARIES=<file>=<package> ...)"
    echo "$names $tools"
  fi
}
module_of() { # <dir> <package> -> "<module path> <version>"
  (cd "$TOOLS/$1" && go list -f '{{.Module.Path}} {{.Module.Version}}' "$2")
}
dep_version() { # <dir> <module path> -> version selected in that module's build list
  (cd "$TOOLS/$1" && go list -m -f '{{.Version}}' "$2")
}
build_env() { # <dir> <key> -> the value in tools/upstream/<dir>/build.env (empty when unset)
  [[ -f "$TOOLS/$1/build.env" ]] || die "tools/upstream/$1 has no build.env (BINARY= or BINARIES=, LDFLAGS=)"
  sed -n "s/^$2=//p" "$TOOLS/$1/build.env" | tail -1
}
provides() { # <dir> <module path> -> true when the wrapper in <dir> builds a package of that module
  local pkg
  while read -r pkg; do [[ "$pkg" == "$2" || "$pkg" == "$2/"* ]] && return 0; done < <(tool_packages "$1")
  return 1
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

build_one() { # <kind> <version> <dir> <out> <ldflags> <stamp> <name=package>...; runs in the background
  local kind="$1" version="$2" dir="$3" out="$4" ldflags="$5" want="$6"; shift 6
  local start=$SECONDS cpu_start cpu tmp="$out/.build.tmp.$BASHPID" pair names=() pkgs=() bytes=0 sizes=()
  for pair in "$@"; do names+=("${pair%%=*}") pkgs+=("${pair#*=}"); done
  rm -rf "$tmp"; mkdir -p "$tmp"
  child_cpu "$out"; cpu_start=$CHILD_CPU
  local -a target=(-o "$tmp/${names[0]}")  # one binary: under its own name
  [[ ${#pkgs[@]} -eq 1 ]] || target=(-o "$tmp/")  # several: one go build, each named after its package
  if ! (cd "$TOOLS/$dir" && nice -n "$NICE" go build -trimpath -ldflags "$ldflags" "${target[@]}" "${pkgs[@]}"); then
    rm -rf "$tmp"
    echo "[upstream] ERROR: building $kind $version failed after $((SECONDS - start))s (see the go output above)" >&2
    return 1
  fi
  local i built
  for i in "${!names[@]}"; do
    built="$tmp/${names[$i]}"; [[ ${#pkgs[@]} -eq 1 ]] || built="$tmp/$(exe_name "${pkgs[$i]}")"
    if [[ ! -f "$built" ]]; then
      rm -rf "$tmp"
      echo "[upstream] ERROR: go build of $kind $version left no $(basename "$built") for ${pkgs[$i]}" >&2
      return 1
    fi
    mv -f "$built" "$out/${names[$i]}"
    bytes=$((bytes + $(stat -c %s "$out/${names[$i]}")))
    sizes+=("${names[$i]} $(du -m "$out/${names[$i]}" | cut -f1) MiB")
  done
  rm -rf "$tmp"
  echo "$want" > "$out/.stamp"
  child_cpu "$out"; cpu=$((CHILD_CPU - cpu_start))
  local IFS=,
  echo "[upstream] $kind $version done in $((SECONDS - start))s, ${cpu} CPU-s (${sizes[*]})"
  echo "$(date -u +%FT%TZ) $kind $version seconds=$((SECONDS - start)) cpu_seconds=$cpu bytes=$bytes binaries=${#names[@]} gocache=$gocache go=$GO_VERSION jobs=$POOL_JOBS" >> "$CACHE/build-times.log"
}

total_start=$SECONDS
built=() skipped=()
for dir in "${targets[@]}"; do
  listing="$(binaries "$dir")" || exit 1  # binaries() died in its subshell; its message is above
  names=() pairs=()
  while read -r name pkg; do names+=("$name") pairs+=("$name=$pkg"); done <<<"$listing"
  dupes="$(printf '%s\n' "${names[@]}" | sort | uniq -d)"
  [[ -z "$dupes" ]] || die "tools/upstream/$dir/build.env names a binary twice: $dupes"
  if [[ ${#pairs[@]} -gt 1 ]]; then
    dupes="$(for pair in "${pairs[@]}"; do exe_name "${pair#*=}"; done | sort | uniq -d)"
    [[ -z "$dupes" ]] || die "tools/upstream/$dir: two tool packages end in '$dupes'; one go build cannot write both"
  fi
  pkg="${pairs[0]#*=}"
  read -r module version < <(module_of "$dir" "$pkg") || die "go list $pkg failed in tools/upstream/$dir"
  kind="${dir%%-v*}"
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

  want="$(IFS=,; echo "${names[*]}") $version $GO_VERSION $(cat "$TOOLS/$dir/go.mod" "$TOOLS/$dir/go.sum" | sha256sum | cut -c1-16) $(sha256sum <<<"$ldflags" | cut -c1-16)"
  present=1
  for name in "${names[@]}"; do [[ -x "$out/$name" ]] || present=""; done
  if [[ -z "${FORCE:-}" && -n "$present" && -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$want" ]]; then
    echo "[upstream] $kind $version up to date ($out/${names[*]})"
    skipped+=("$kind-$version")
  else
    echo "[upstream] $kind $version (${pairs[*]#*=}) ... (Go build cache: $gocache; $POOL_JOBS builds at once)"
    pool_run "$kind-$version" build_one "$kind" "$version" "$dir" "$out" "$ldflags" "$want" "${pairs[@]}"
    built+=("$kind-$version") gocache=warm
  fi

  # What conformance.upstream reads: which binary, and where the release's manifests are.
  {
    echo "NAME=$kind"
    echo "MODULE=$module"
    echo "VERSION=$version"
    echo "COMMIT=$commit"
    echo "BINARY=$out/${names[0]}"
    echo "BINARIES=${names[*]}"
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
