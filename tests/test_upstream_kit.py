"""The upstream kit (conformance.upstream): the real Trainer and JobSet managers (and the Training
Operator, MPI Operator, LWS and Volcano ones further down), built from their Go modules by ``make
upstream-kit``, installed into the local control plane. The build script's own logic is tested offline
with a stand-in ``go`` (several binaries from one wrapper, stamps, ``source.env``, refused ``build.env``s).

Live tests (``-m live``) need ``make control-plane`` and ``make upstream-kit``; a missing build
is an error naming the build command, never a skip. Each Trainer release gets its own install
into one shared control plane, and the last test of each class checks that teardown leaves
nothing behind - which is also what lets the next release install cleanly.

Expected values are upstream facts (shared/reference/trainer-v2.md): which JobSet each Trainer
release requires, the webhook names and paths (§5), the MPI topology denial (§1.1, test vector
"runtime does not have Launcher even though MPI with runLauncherAsNode has 2 numNodes") and
how a TrainJob becomes a JobSet (§4.2).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from conformance.cluster import LocalControlPlane
from conformance.upstream import MissingUpstreamBuildError, UpstreamKit, known_versions
from conformance.upstream.builds import find_build, upstream_dir

ROOT = Path(__file__).resolve().parents[1]

#: Trainer release -> the JobSet release its go.mod requires (trainer-v2.md header table: v2.1.0
#: used jobset v0.10.1; v2.3.0 requires v0.12.0).
RELEASES = {"v2.3.0": "v0.12.0", "v2.1.0": "v0.10.1"}
#: The release commits (trainer-v2.md header table).
TRAINER_COMMITS = {"v2.3.0": "658725bdae5c7e3a0854d93ac6ff492e109a22ab",
                   "v2.1.0": "73c9bece741ce17d2124abda3ec6bfcf5b5b8e87"}

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
MPI_DENIAL = (
    'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
    "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with enabled "
    "runLauncherAsNode does not have either launcher and node"
)
WEBHOOK_PATHS = {  # trainer-v2.md §5
    "validator.trainjob.trainer.kubeflow.org": "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
    "validator.trainingruntime.trainer.kubeflow.org": "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime",
    "validator.clustertrainingruntime.trainer.kubeflow.org":
        "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime",
}


# ---------------------------------------------------------------------- without a cluster

def test_every_trainer_module_has_a_jobset_module_for_the_release_it_requires():
    from conformance.upstream.builds import TOOLS_DIR, pinned_version

    jobsets = set(known_versions("jobset"))
    for go_mod in sorted(TOOLS_DIR.glob("trainer-*/go.mod")):
        trainer = pinned_version(go_mod, "github.com/kubeflow/trainer/v2")
        required = pinned_version(go_mod, "sigs.k8s.io/jobset")
        assert required in jobsets, f"{go_mod}: Trainer {trainer} requires JobSet {required}, not in {sorted(jobsets)}"
        if trainer in RELEASES:
            assert required == RELEASES[trainer]


def test_missing_build_names_the_version_and_the_build_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TC_CACHE_DIR", str(tmp_path))
    with pytest.raises(MissingUpstreamBuildError) as error:
        find_build("trainer", "v2.3.0")
    message = str(error.value)
    assert "trainer v2.3.0" in message and "make upstream-kit" in message and str(tmp_path) in message
    with pytest.raises(MissingUpstreamBuildError):
        UpstreamKit(tmp_path / "kubeconfig", "v9.9.9").up()


def test_point_at_rewrites_every_service_client_config_to_loopback():
    import base64

    from conformance.upstream.manifests import OperatorManifests, point_at

    service = {"service": {"name": "webhook-service", "namespace": "system", "path": "/validate-x"}}
    webhook_config = {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"},
                      "webhooks": [{"name": "a.example.com", "clientConfig": service, "failurePolicy": "Fail"}]}
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "xs.example.com"},
           "spec": {"conversion": {"strategy": "Webhook", "webhook": {
               "clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/convert"}},
               "conversionReviewVersions": ["v1"]}}}}
    original = OperatorManifests(crds=[crd], webhook_configurations=[webhook_config])
    out = point_at(original, "https://127.0.0.1:9443", b"CA PEM")
    ca = base64.b64encode(b"CA PEM").decode()
    assert out.webhook_configurations[0]["webhooks"][0] == {
        "name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:9443/validate-x", "caBundle": ca},
        "failurePolicy": "Fail"}
    assert out.crds[0]["spec"]["conversion"]["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/convert", "caBundle": ca}
    assert webhook_config["webhooks"][0]["clientConfig"] is service  # the input is left alone


def tool_packages(go_mod: Path) -> list[str]:
    """The tool packages of a go.mod: ``tool pkg`` lines and ``tool ( ... )`` blocks."""
    text = go_mod.read_text()
    single = re.findall(r"^tool\s+([^\s(]+)\s*$", text, re.M)
    blocks = [line.split()[0] for block in re.findall(r"^tool\s*\(\n(.*?)^\)", text, re.M | re.S)
              for line in block.splitlines() if line.strip()]
    return single + blocks


def read_build_env(directory: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (directory / "build.env").read_text().splitlines()
                if line and not line.startswith("#"))


def test_every_wrapper_module_belongs_to_a_project_and_says_how_to_build_it():
    """tools/upstream/<project>-v<x.y>/: every tool line builds a package of the project's module,
    the version it pins is a release the project judges, build.env names the binary (BINARY, one
    tool line) or every binary (BINARIES=<file>=<package> ..., each package one of the tool lines)."""
    from conformance.upstream.builds import TOOLS_DIR, pinned_version
    from conformance.upstream.projects import PROJECTS

    seen = set()
    for go_mod in sorted(TOOLS_DIR.glob("*/go.mod")):
        directory = go_mod.parent.name
        tools = tool_packages(go_mod)
        build_env = read_build_env(go_mod.parent)
        assert bool(build_env.get("BINARY")) != bool(build_env.get("BINARIES")), \
            f"{directory}/build.env must name BINARY or BINARIES (one of them)"
        if build_env.get("BINARY"):
            assert len(tools) == 1, f"{directory}: BINARY= with {len(tools)} tool lines"
        else:
            pairs = dict(pair.split("=", 1) for pair in build_env["BINARIES"].split())
            assert sorted(pairs.values()) == sorted(tools), f"{directory}: BINARIES {pairs} vs tool lines {tools}"
        if directory == "kustomize":
            continue
        project = PROJECTS[directory.rsplit("-v", 1)[0]]
        for tool in tools:
            assert tool == project.module or tool.startswith(project.module + "/"), (directory, tool)
        version = pinned_version(go_mod, project.module)
        assert version in project.profiles, f"{directory} pins {version}, which no profile of {project.name} judges"
        seen.add((project.name, version))
    for project in PROJECTS.values():
        for version in project.profiles:
            assert (project.name, version) in seen, f"{project.name} {version} has no wrapper module"


def test_volcano_builds_the_three_binaries_its_managers_start():
    from conformance.upstream.builds import TOOLS_DIR
    from conformance.upstream.managers import VOLCANO_BINARIES

    pairs = dict(pair.split("=", 1) for pair in read_build_env(TOOLS_DIR / "volcano-v1.10")["BINARIES"].split())
    assert sorted(pairs) == sorted(VOLCANO_BINARIES)
    assert pairs["vc-webhook-manager"] == "volcano.sh/volcano/cmd/webhook-manager"


def test_every_profile_a_project_is_judged_with_exists():
    from conformance.upstream.projects import PROJECTS
    from reconciler import profiles

    for project in PROJECTS.values():
        for version in project.profiles:
            judged = project.profiles_for(version)
            assert judged, f"{project.name} {version}: no profile"
            for profile in judged:
                assert profiles.get(profile).name == profile
            # the release's own profile comes first (its report directory is <project>-<version>)
            assert judged[0].endswith("-v" + ".".join(version.lstrip("v").split(".")[:2])), (project.name, judged)


def test_projects_start_after_what_they_require():
    from conformance.upstream.projects import with_requirements

    assert [p.name for p in with_requirements("trainer")] == ["jobset", "trainer"]
    assert [p.name for p in with_requirements("training-operator")] == ["training-operator"]
    assert [p.name for p in with_requirements("mpi-operator")] == ["mpi-operator"]
    assert [p.name for p in with_requirements("lws")] == ["lws"]
    assert [p.name for p in with_requirements("volcano")] == ["volcano"]


def test_webhook_probes_are_chosen_per_project():
    """JobSet and LWS both name their pod webhooks mpod.kb.io and vpod.kb.io (each in its own
    configuration): a project's webhooks get that project's probes only."""
    from conformance.upstream.probes import lws_pod_webhooks, jobset_pod_webhooks, probes_for

    lws, unprobed = probes_for(["mleaderworkerset.kb.io", "mpod.kb.io", "vleaderworkerset.kb.io", "vpod.kb.io"], "lws")
    assert unprobed == [] and {p.project for p in lws} == {"lws"} and len(lws) == 3
    assert [p.run for p in lws if "mpod.kb.io" in p.webhooks] == [lws_pod_webhooks]
    jobset, _ = probes_for(["mpod.kb.io", "vpod.kb.io"], "jobset")
    assert [p.run for p in jobset] == [jobset_pod_webhooks]
    assert probes_for(["mpod.kb.io"], "training-operator") == ([], ["mpod.kb.io"])


def test_upstream_conformance_runs_are_named_by_project_and_version():
    from conformance.upstream.run import RUNS, select

    assert select(["trainer-v2.3.0"]) == [("trainer", "v2.3.0")]
    assert select(["v2.1.0"]) == [("trainer", "v2.1.0")]  # a version alone, where one project has it
    assert select(["mpi-operator-v0.6.0", "v1.8.1"]) == [("mpi-operator", "v0.6.0"), ("training-operator", "v1.8.1")]
    assert select(None) == list(RUNS)
    with pytest.raises(SystemExit, match="unknown"):
        select(["v9.9.9"])


def test_select_keeps_the_named_crds_and_webhooks_and_drops_empty_configurations():
    from conformance.upstream.manifests import ManifestError, OperatorManifests, select

    crd = lambda name: {"kind": "CustomResourceDefinition", "metadata": {"name": name}}  # noqa: E731
    hook = lambda name: {"name": name, "clientConfig": {"service": {"path": "/" + name}}}  # noqa: E731
    manifests = OperatorManifests(
        crds=[crd("pytorchjobs.kubeflow.org"), crd("mpijobs.kubeflow.org")],
        webhook_configurations=[
            {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}, "webhooks": [hook("a"), hook("b")]},
            {"kind": "MutatingWebhookConfiguration", "metadata": {"name": "m"}, "webhooks": [hook("c")]}])
    out = select(manifests, ("pytorchjobs.kubeflow.org",), ("b",))
    assert [c["metadata"]["name"] for c in out.crds] == ["pytorchjobs.kubeflow.org"]
    assert [(c["metadata"]["name"], [w["name"] for w in c["webhooks"]]) for c in out.webhook_configurations] == \
        [("v", ["b"])]
    assert len(manifests.crds) == 2 and len(manifests.webhook_configurations[0]["webhooks"]) == 2  # input kept
    assert select(manifests, None, None) == manifests
    with pytest.raises(ManifestError, match="no CRD tfjobs.kubeflow.org"):
        select(manifests, ("tfjobs.kubeflow.org",), None)


def test_pki_passes_the_checks_of_the_training_operator_cert_rotator():
    """cert-controller pkg/rotator: validCACert verifies the CA against itself for the DNS name
    training-operator-ca, validServerCert the serving certificate for <service>.<namespace>.svc,
    both at now + 90 days (its lookahead); ca.key is parsed with x509.ParsePKCS1PrivateKey. The
    apiserver calls the webhook at 127.0.0.1."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from conformance.upstream.pki import generate

    pki = generate(dns_names=("localhost", "training-operator.kubeflow.svc"), ca_dns_names=("training-operator-ca",))
    assert pki.ca_key.startswith(b"-----BEGIN RSA PRIVATE KEY-----")  # PKCS#1
    ca, cert = x509.load_pem_x509_certificate(pki.ca_cert), x509.load_pem_x509_certificate(pki.cert)
    lookahead = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=90)
    for c in (ca, cert):
        assert c.not_valid_after_utc > lookahead
    assert ca.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["training-operator-ca"]
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "training-operator.kubeflow.svc" in san.get_values_for_type(x509.DNSName)
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    assert ExtendedKeyUsageOID.SERVER_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    cert.verify_directly_issued_by(ca)


def test_point_at_refuses_a_webhook_without_a_service_path():
    from conformance.upstream.manifests import ManifestError, OperatorManifests, point_at

    config = {"kind": "MutatingWebhookConfiguration", "metadata": {"name": "m"},
              "webhooks": [{"name": "b.example.com", "clientConfig": {"url": "https://elsewhere/"}}]}
    with pytest.raises(ManifestError, match="MutatingWebhookConfiguration m webhook b.example.com"):
        point_at(OperatorManifests(crds=[], webhook_configurations=[config]), "https://127.0.0.1:1", b"")


# ---------------------------------------------------------------------- hack/build-upstream.sh, with a stand-in go

#: A stand-in for the go command, enough for hack/build-upstream.sh: each wrapper directory holds
#: .fake-module ("<module> <version>"); `go build` writes "<package> <ldflags>" into each output and
#: logs its arguments to $FAKE_GO_LOG, one call a line; `go mod download -json` points at a module
#: directory and a .info file under $FAKE_GO_ROOT.
FAKE_GO = r"""#!/usr/bin/env bash
set -eu
case "$1 ${2:-}" in
  "env GOVERSION") echo go1.26.8 ;;
  "env GOCACHE") echo "$FAKE_GO_ROOT/gocache" ;;
  "list -f") cat .fake-module ;;
  "list -m") echo v0.0.0 ;;
  "mod download")
    read -r module version < .fake-module
    mkdir -p "$FAKE_GO_ROOT/mod/$module@$version"
    echo "{\"Time\": \"2024-08-01T00:00:00Z\", \"Origin\": {\"Hash\": \"c601aed1\"}}" > "$FAKE_GO_ROOT/$version.info"
    printf '{\n\t"Path": "%s",\n\t"Info": "%s",\n\t"Dir": "%s",\n\t"Sum": "h1:x"\n}\n' \
      "$module" "$FAKE_GO_ROOT/$version.info" "$FAKE_GO_ROOT/mod/$module@$version" ;;
  "build -trimpath")
    echo "$*" >> "$FAKE_GO_LOG"
    [[ -z "${FAKE_GO_FAIL:-}" ]] || { echo "fake go: build failed" >&2; exit 1; }
    shift 2; ldflags=""; out=""
    while [[ $# -gt 0 ]]; do
      case "$1" in -ldflags) ldflags="$2"; shift 2 ;; -o) out="$2"; shift 2 ;; *) break ;; esac
    done
    if [[ "$out" == */ ]]; then
      for pkg in "$@"; do name="${pkg##*/}"; echo "$pkg $ldflags" > "$out$name"; chmod +x "$out$name"; done
    else
      echo "$1 $ldflags" > "$out"; chmod +x "$out"
    fi ;;
  *) echo "fake go: unexpected: $*" >&2; exit 3 ;;
esac
"""


@pytest.fixture
def fake_build(tmp_path):
    """hack/build-upstream.sh against wrapper modules in tmp_path/tools with the stand-in go."""
    import os
    import subprocess

    bin_dir, tools, cache = tmp_path / "bin", tmp_path / "tools", tmp_path / "cache"
    bin_dir.mkdir()
    (bin_dir / "go").write_text(FAKE_GO)
    (bin_dir / "go").chmod(0o755)
    (tmp_path / "gocache").mkdir()
    log = tmp_path / "go.log"

    def wrapper(name: str, module: str, version: str, tools_block: list[str], build_env: str) -> Path:
        directory = tools / name
        directory.mkdir(parents=True)
        lines = (f"tool {tools_block[0]}" if len(tools_block) == 1
                 else "tool (\n" + "".join(f"\t{t}\n" for t in tools_block) + ")")
        (directory / "go.mod").write_text(f"module example/{name}\n\ngo 1.24.0\n\n{lines}\n\nrequire {module} {version}\n")
        (directory / "go.sum").write_text("")
        (directory / "build.env").write_text(build_env)
        (directory / ".fake-module").write_text(f"{module} {version}\n")
        return directory

    def run(*targets: str, **env: str) -> subprocess.CompletedProcess:
        full_env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TC_UPSTREAM_TOOLS": str(tools),
                    "TC_CACHE_DIR": str(cache), "FAKE_GO_ROOT": str(tmp_path), "FAKE_GO_LOG": str(log), "NICE": "0",
                    **env}
        return subprocess.run([str(ROOT / "hack" / "build-upstream.sh"), *targets], env=full_env,
                              capture_output=True, text=True, timeout=60)

    def calls() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    return type("FakeBuild", (), {"wrapper": staticmethod(wrapper), "run": staticmethod(run),
                                  "calls": staticmethod(calls), "cache": cache / "upstream"})


VOLCANO_TOOLS = ["volcano.sh/volcano/cmd/controller-manager", "volcano.sh/volcano/cmd/scheduler",
                 "volcano.sh/volcano/cmd/webhook-manager"]
VOLCANO_BINARIES_ENV = ("BINARIES=vc-controller-manager=volcano.sh/volcano/cmd/controller-manager "
                        "vc-webhook-manager=volcano.sh/volcano/cmd/webhook-manager vc-scheduler=volcano.sh/volcano/cmd/scheduler\n"
                        "LDFLAGS=-X volcano.sh/volcano/pkg/version.Version=$VERSION -X volcano.sh/volcano/pkg/version.GitSHA=$COMMIT\n")


def test_build_script_builds_several_binaries_in_one_go_build(fake_build):
    fake_build.wrapper("volcano-v1.10", "volcano.sh/volcano", "v1.10.0", VOLCANO_TOOLS, VOLCANO_BINARIES_ENV)
    result = fake_build.run("volcano-v1.10")
    assert result.returncode == 0, result.stderr
    [call] = fake_build.calls()  # one go build for all three: their shared packages compile once
    assert call.endswith(" ".join(["volcano.sh/volcano/cmd/controller-manager", "volcano.sh/volcano/cmd/webhook-manager",
                                   "volcano.sh/volcano/cmd/scheduler"]))
    assert "-o " in call and call.split("-o ")[1].split()[0].endswith("/")
    out = fake_build.cache / "volcano-v1.10.0"
    for name, package in [("vc-controller-manager", "controller-manager"), ("vc-webhook-manager", "webhook-manager"),
                          ("vc-scheduler", "scheduler")]:
        built = (out / name).read_text()
        assert built.startswith(f"volcano.sh/volcano/cmd/{package} ")  # the file its package built, renamed
        assert "version.Version=v1.10.0" in built and "version.GitSHA=c601aed1" in built
    assert not [p.name for p in out.iterdir() if p.name.startswith(".build")]  # no temporary directory left
    env = dict(line.split("=", 1) for line in (out / "source.env").read_text().splitlines())
    assert env["BINARY"] == str(out / "vc-controller-manager")
    assert env["BINARIES"] == "vc-controller-manager vc-webhook-manager vc-scheduler"
    assert (env["MODULE"], env["VERSION"], env["COMMIT"], env["NAME"]) == ("volcano.sh/volcano", "v1.10.0", "c601aed1", "volcano")
    assert (out / ".stamp").read_text().startswith("vc-controller-manager,vc-webhook-manager,vc-scheduler v1.10.0 go1.26.8 ")
    assert "binaries=3" in (fake_build.cache / "build-times.log").read_text()

    # Up to date: nothing built again; one binary gone: all three are built again.
    again = fake_build.run("volcano-v1.10")
    assert again.returncode == 0 and "up to date" in again.stdout and len(fake_build.calls()) == 1
    (out / "vc-scheduler").unlink()
    rebuilt = fake_build.run("volcano-v1.10")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert len(fake_build.calls()) == 2 and (out / "vc-scheduler").is_file()


def test_build_script_keeps_building_a_single_binary_under_its_own_name(fake_build):
    fake_build.wrapper("lws-v0.7", "sigs.k8s.io/lws", "v0.7.0", ["sigs.k8s.io/lws/cmd"],
                       "BINARY=lws-controller-manager\nLDFLAGS=\n")
    result = fake_build.run()
    assert result.returncode == 0, result.stderr
    [call] = fake_build.calls()
    out = fake_build.cache / "lws-v0.7.0"
    assert call.split("-o ")[1].split()[0].endswith("/lws-controller-manager") and call.endswith(" sigs.k8s.io/lws/cmd")
    assert (out / "lws-controller-manager").read_text().startswith("sigs.k8s.io/lws/cmd ")
    env = dict(line.split("=", 1) for line in (out / "source.env").read_text().splitlines())
    assert env["BINARY"] == str(out / "lws-controller-manager") and env["BINARIES"] == "lws-controller-manager"
    # the stamp of a single-binary build is what it was before BINARIES existed (no rebuild)
    assert (out / ".stamp").read_text().startswith("lws-controller-manager v0.7.0 go1.26.8 ")


@pytest.mark.parametrize("build_env, tools, message", [
    ("BINARIES=vc-a=volcano.sh/volcano/cmd/other\nLDFLAGS=\n", VOLCANO_TOOLS,
     "volcano.sh/volcano/cmd/other is not a tool line of its go.mod"),
    ("BINARIES=vc-a volcano.sh/volcano/cmd/scheduler\nLDFLAGS=\n", VOLCANO_TOOLS, "'vc-a' is not <file name>=<package>"),
    ("BINARY=vc-a\nLDFLAGS=\n", VOLCANO_TOOLS, "has no single 'tool' line for BINARY=vc-a"),
    ("BINARY=a\nBINARIES=a=volcano.sh/volcano/cmd/scheduler\n", VOLCANO_TOOLS, "has both BINARY= and BINARIES="),
    ("LDFLAGS=\n", VOLCANO_TOOLS, "names no BINARY (or BINARIES)"),
    ("BINARIES=a=volcano.sh/volcano/cmd/scheduler a=volcano.sh/volcano/cmd/webhook-manager\n", VOLCANO_TOOLS,
     "names a binary twice: a"),
    ("BINARIES=a=example.com/x/cmd/tool b=example.com/y/cmd/tool\n", ["example.com/x/cmd/tool", "example.com/y/cmd/tool"],
     "two tool packages end in 'tool'"),
])
def test_build_script_refuses_a_build_env_it_cannot_follow(fake_build, build_env, tools, message):
    fake_build.wrapper("volcano-v1.10", "volcano.sh/volcano", "v1.10.0", tools, build_env)
    result = fake_build.run("volcano-v1.10")
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert fake_build.calls() == []  # refused before any go build


def test_build_script_reports_a_failed_go_build_and_keeps_no_binary(fake_build):
    fake_build.wrapper("volcano-v1.10", "volcano.sh/volcano", "v1.10.0", VOLCANO_TOOLS, VOLCANO_BINARIES_ENV)
    result = fake_build.run("volcano-v1.10", FAKE_GO_FAIL="1")
    assert result.returncode != 0 and "building volcano v1.10.0 failed" in result.stderr
    out = fake_build.cache / "volcano-v1.10.0"
    assert not [p.name for p in out.iterdir() if p.name.startswith(("vc-", ".build", ".stamp"))]


# ---------------------------------------------------------------------- Volcano kit pieces, without a cluster

def write_source_env(directory: Path, **values: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "source.env").write_text("".join(f"{k}={v}\n" for k, v in values.items()))


def test_find_build_reads_every_binary_of_a_build(tmp_path, monkeypatch):
    monkeypatch.setenv("TC_CACHE_DIR", str(tmp_path))
    out, module_dir = tmp_path / "upstream" / "volcano-v1.10.0", tmp_path / "mod"
    module_dir.mkdir()
    write_source_env(out, NAME="volcano", MODULE="volcano.sh/volcano", VERSION="v1.10.0", COMMIT="c601aed1",
                     BINARY=out / "vc-controller-manager", BINARIES="vc-controller-manager vc-webhook-manager vc-scheduler",
                     MODULE_DIR=module_dir)
    for name in ("vc-controller-manager", "vc-webhook-manager"):
        (out / name).write_text("")
    with pytest.raises(MissingUpstreamBuildError, match="vc-scheduler is missing; rebuild it with `make upstream-kit`"):
        find_build("volcano", "v1.10.0")
    (out / "vc-scheduler").write_text("")
    build = find_build("volcano", "v1.10.0")
    assert build.binaries == {n: out / n for n in ("vc-controller-manager", "vc-webhook-manager", "vc-scheduler")}
    assert build.binary == out / "vc-controller-manager" and build.binary_named("vc-scheduler") == out / "vc-scheduler"
    with pytest.raises(MissingUpstreamBuildError, match="has no binary 'vcctl'"):
        build.binary_named("vcctl")
    # A build made before BINARIES existed: its one BINARY.
    old = tmp_path / "upstream" / "lws-v0.7.0"
    write_source_env(old, MODULE="sigs.k8s.io/lws", VERSION="v0.7.0", BINARY=old / "lws-controller-manager",
                     MODULE_DIR=module_dir)
    (old / "lws-controller-manager").write_text("")
    assert find_build("lws", "v0.7.0").binaries == {"lws-controller-manager": old / "lws-controller-manager"}


def volcano_context(tmp_path):
    from conformance.upstream.builds import Build
    from conformance.upstream.managers import Context
    from conformance.upstream.pki import generate

    names = ("vc-controller-manager", "vc-webhook-manager", "vc-scheduler")
    build = Build("volcano", "volcano.sh/volcano", "v1.10.0", "c601aed1", tmp_path / names[0], tmp_path,
                  binaries={n: tmp_path / n for n in names})
    return Context(build=build, kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path / "volcano", pki=generate(),
                   ports=(9443, 11251, 11252), namespace="volcano-system")


def test_volcano_managers_start_webhooks_first_with_our_certificate_on_loopback(tmp_path):
    from conformance.upstream.kit import managers_of
    from conformance.upstream.projects import VOLCANO

    ctx = volcano_context(tmp_path)
    webhook, controllers, scheduler = managers_of(VOLCANO, ctx)
    assert [m.name for m in (webhook, controllers, scheduler)] == ["vc-webhook-manager", "vc-controller-manager",
                                                                   "vc-scheduler"]
    assert [m.argv[0] for m in (webhook, controllers, scheduler)] == [
        str(tmp_path / n) for n in ("vc-webhook-manager", "vc-controller-manager", "vc-scheduler")]
    flags = dict(a.split("=", 1) for a in webhook.argv[1:])
    assert flags["--listen-address"] == "127.0.0.1" and flags["--port"] == "9443"
    assert flags["--webhook-url"] == "https://127.0.0.1:9443"
    assert Path(flags["--ca-cert-file"]).read_bytes() == ctx.pki.ca_cert
    assert Path(flags["--tls-cert-file"]).read_bytes() == ctx.pki.cert
    assert Path(flags["--tls-private-key-file"]).read_bytes() == ctx.pki.key
    assert "--enable-healthz" not in webhook.argv  # its health server would be TLS on every interface
    assert webhook.webhook_url == "https://127.0.0.1:9443" and webhook.ready_urls == ("https://127.0.0.1:9443/jobs/mutate",)
    for manager, port in ((controllers, 11251), (scheduler, 11252)):
        assert "--leader-elect=false" in manager.argv and f"--healthz-address=127.0.0.1:{port}" in manager.argv
        assert manager.webhook_url is None and manager.ready_urls == (f"http://127.0.0.1:{port}/healthz",)
        assert "KUBECONFIG" not in manager.env and f"--kubeconfig={ctx.kubeconfig}" in manager.argv
    controller_list = next(a for a in controllers.argv if a.startswith("--controllers=")).split("=", 1)[1].split(",")
    assert sorted(controller_list) == ["gc-controller", "job-controller", "pg-controller", "queue-controller"]
    assert "--cache-dumper=false" in scheduler.argv


def test_the_kit_starts_the_nth_managers_of_all_projects_together_and_needs_one_webhook_server(tmp_path):
    import dataclasses

    from conformance.upstream import kit as kit_mod
    from conformance.upstream.manifests import ManifestError
    from conformance.upstream.projects import JOBSET, VOLCANO

    ctx = volcano_context(tmp_path)
    kit = UpstreamKit(tmp_path / "kubeconfig", "v1.10.0", project="volcano")
    volcano = kit_mod.managers_of(VOLCANO, ctx)
    jobset = kit_mod.managers_of(dataclasses.replace(VOLCANO, manager=lambda c: volcano[0]), ctx)
    kit._projects = [JOBSET, VOLCANO]
    kit._project_managers = {"jobset": jobset, "volcano": volcano}
    assert [[m.name for m in stage] for stage in kit._stages()] == [
        ["vc-webhook-manager", "vc-webhook-manager"], ["vc-controller-manager"], ["vc-scheduler"]]
    assert kit_mod.webhook_url(VOLCANO, volcano, True) == "https://127.0.0.1:9443"
    with pytest.raises(ManifestError, match="serves no webhooks"):
        kit_mod.webhook_url(VOLCANO, volcano[1:], True)
    assert kit_mod.webhook_url(VOLCANO, volcano[1:], False) is None
    with pytest.raises(ManifestError, match="all serve webhooks"):
        kit_mod.webhook_url(VOLCANO, [volcano[0], volcano[0]], True)
    with pytest.raises(kit_mod.UpstreamStartError, match="not Managers"):
        kit_mod.managers_of(dataclasses.replace(VOLCANO, manager=lambda c: []), ctx)


def test_volcano_webhook_configurations_are_the_charts_seven_pointed_at_loopback(tmp_path):
    """Names vc-webhook-manager waits for: volcano-admission-service + path with - for /; one webhook
    each, failurePolicy Fail, the release namespace and kube-system left out (templates/webhooks.yaml)."""
    import base64

    from conformance.upstream.manifests import load, point_at
    from conformance.upstream.projects import VOLCANO

    crd_dir = tmp_path / "config/crd/volcano/bases"
    crd_dir.mkdir(parents=True)
    for name in ("jobs.batch.volcano.sh", "queues.scheduling.volcano.sh"):
        (crd_dir / f"{name}.yaml").write_text(f"---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                                              f"metadata:\n  name: {name}\n")
    manifests = load(None, VOLCANO, tmp_path)  # no kustomize: plain files and the kit's own configurations
    assert [c["metadata"]["name"] for c in manifests.crds] == ["jobs.batch.volcano.sh", "queues.scheduling.volcano.sh"]
    expected = {
        "volcano-admission-service-pods-mutate": ("MutatingWebhookConfiguration", "mutatepod.volcano.sh", "/pods/mutate"),
        "volcano-admission-service-queues-mutate": ("MutatingWebhookConfiguration", "mutatequeue.volcano.sh", "/queues/mutate"),
        "volcano-admission-service-podgroups-mutate": ("MutatingWebhookConfiguration", "mutatepodgroup.volcano.sh",
                                                       "/podgroups/mutate"),
        "volcano-admission-service-jobs-mutate": ("MutatingWebhookConfiguration", "mutatejob.volcano.sh", "/jobs/mutate"),
        "volcano-admission-service-jobs-validate": ("ValidatingWebhookConfiguration", "validatejob.volcano.sh", "/jobs/validate"),
        "volcano-admission-service-pods-validate": ("ValidatingWebhookConfiguration", "validatepod.volcano.sh", "/pods/validate"),
        "volcano-admission-service-queues-validate": ("ValidatingWebhookConfiguration", "validatequeue.volcano.sh",
                                                      "/queues/validate"),
    }
    pointed = point_at(manifests, "https://127.0.0.1:9443", b"CA")
    got = {c["metadata"]["name"]: (c["kind"], [w["name"] for w in c["webhooks"]], [w["clientConfig"] for w in c["webhooks"]])
           for c in pointed.webhook_configurations}
    assert got == {name: (kind, [hook], [{"url": "https://127.0.0.1:9443" + path, "caBundle": base64.b64encode(b"CA").decode()}])
                   for name, (kind, hook, path) in expected.items()}
    hooks = {w["name"]: w for c in manifests.webhook_configurations for w in c["webhooks"]}
    for webhook in hooks.values():
        assert (webhook["failurePolicy"], webhook["sideEffects"], webhook["timeoutSeconds"]) == ("Fail", "NoneOnDryRun", 10)
        assert webhook["namespaceSelector"]["matchExpressions"] == [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["volcano-system", "kube-system"]}]
    assert hooks["validatejob.volcano.sh"]["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert hooks["validatequeue.volcano.sh"]["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]
    assert hooks["mutatepod.volcano.sh"]["rules"][0]["apiGroups"] == [""]
    assert hooks["mutatejob.volcano.sh"]["rules"][0]["apiGroups"] == ["batch.volcano.sh"]


def test_plain_manifest_directories_must_hold_yaml(tmp_path):
    from conformance.upstream.manifests import ManifestError, load
    from conformance.upstream.projects import VOLCANO

    with pytest.raises(ManifestError, match="is not a directory"):
        load(None, VOLCANO, tmp_path)
    (tmp_path / "config/crd/volcano/bases").mkdir(parents=True)
    with pytest.raises(ManifestError, match="has no \\*.yaml files"):
        load(None, VOLCANO, tmp_path)
    (tmp_path / "config/crd/volcano/bases/x.yaml").write_text("kind: ConfigMap\n")
    with pytest.raises(ManifestError, match="no CustomResourceDefinition rendered .*config/crd/volcano/bases"):
        load(None, VOLCANO, tmp_path)


def test_every_volcano_webhook_has_a_probe():
    from conformance.upstream.manifests import VOLCANO_ADMISSIONS
    from conformance.upstream.probes import probes_for

    names = [hook for _, hook, _, _ in VOLCANO_ADMISSIONS.values()]
    chosen, unprobed = probes_for(names, "volcano")
    assert unprobed == [] and len(chosen) == 6 and {p.project for p in chosen} == {"volcano"}


def test_volcano_is_one_release_judged_by_three_profiles_on_a_plane_without_the_binder(tmp_path):
    from conformance.cluster import LocalControlPlane
    from conformance.upstream.projects import VOLCANO
    from conformance.upstream.run import plane_options, report_dirs, run_env, select

    assert select(["volcano-v1.10.0"]) == [("volcano", "v1.10.0")] == select(["v1.10.0"])
    assert VOLCANO.profiles_for("v1.10.0") == ("volcano-v1.10", "volcano-v1.11", "volcano-v1.12")
    assert VOLCANO.profiles_for("v9.9.9") == ()
    assert report_dirs(tmp_path, VOLCANO, "v1.10.0") == [
        ("volcano-v1.10", tmp_path / "volcano-v1.10.0"), ("volcano-v1.11", tmp_path / "volcano-v1.10.0-volcano-v1.11"),
        ("volcano-v1.12", tmp_path / "volcano-v1.10.0-volcano-v1.12")]
    assert plane_options("volcano") == {"volcano_binder": False}
    assert run_env("volcano") == {"TC_LIVE_SCHEDULER_GRACE": "30"} and run_env("lws") == {}
    assert plane_options("trainer") == {"volcano_binder": True} == plane_options("lws")
    assert "volcano-binder" not in LocalControlPlane(volcano_binder=False)._extra_components()
    assert "volcano-binder" in LocalControlPlane()._extra_components()


def test_ready_urls_over_https_are_checked_against_the_kits_ca(tmp_path):
    import http.server
    import ssl
    import threading

    from conformance.upstream.kit import _http_ok
    from conformance.upstream.pki import generate

    pki, other = generate(), generate()
    (tmp_path / "tls.crt").write_bytes(pki.cert)
    (tmp_path / "tls.key").write_bytes(pki.key)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/jobs/mutate" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_port}"
        assert _http_ok(url + "/jobs/mutate", pki.ca_cert)
        assert not _http_ok(url + "/other", pki.ca_cert)
        assert not _http_ok(url + "/jobs/mutate", other.ca_cert)  # a certificate of another CA
        assert not _http_ok(url + "/jobs/mutate")  # no CA: never trusted
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------- live

live = pytest.mark.live


@pytest.fixture(scope="module")
def cluster():
    with LocalControlPlane() as plane:
        yield plane


@pytest.fixture(scope="module")
def api(cluster):
    with cluster.api_client() as client:
        yield client


def custom(api):
    from kubernetes import client

    return client.CustomObjectsApi(api)


def wait_for(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


def ensure_namespace(api, name: str) -> None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    try:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    except ApiException as exc:
        if exc.status != 409:
            raise


def replicated_job(name: str, ancestor: str | None, container: str = "node") -> dict:
    labels = {ANCESTOR: ancestor} if ancestor else {}
    return {
        "name": name,
        "template": {
            "metadata": {"labels": labels},
            "spec": {"template": {"spec": {"containers": [
                {"name": container, "image": "registry.invalid/trainer:1", "command": ["true"]}]}}},
        },
    }


def cluster_runtime(name: str, ml_policy: dict, jobs: list[dict]) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name},
        "spec": {"mlPolicy": ml_policy, "template": {"spec": {"replicatedJobs": jobs}}},
    }


def train_job(name: str, runtime: str, num_nodes: int) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": runtime}, "trainer": {"numNodes": num_nodes}},
    }


def create(api, obj: dict, namespace: str | None = None) -> dict:
    group, version = obj["apiVersion"].split("/")
    plural = obj["kind"].lower() + "s"
    if namespace:
        return custom(api).create_namespaced_custom_object(group, version, namespace, plural, obj)
    return custom(api).create_cluster_custom_object(group, version, plural, obj)


def create_trainjob(api, obj: dict, namespace: str) -> dict:
    """Create a TrainJob right after its runtime: the upstream webhook looks the runtime up in its
    manager's informer cache, which may not have seen it yet ("... must be created before the
    TrainJob is created"); a client of upstream retries then, and so does this, for up to 15 s."""
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + 15
    while True:
        try:
            return create(api, obj, namespace)
        except ApiException as error:
            if "must be created before the TrainJob is created" not in (error.body or "") or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def slug(version: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", version.lower()).strip("-")


@pytest.fixture(scope="class")
def kit(cluster, trainer_version):
    """Trainer ``trainer_version`` and its JobSet, installed for one test class; the class's last
    test tears it down itself (down() is idempotent, so this finalizer is then a no-op)."""
    kit = UpstreamKit(cluster.kubeconfig, trainer_version)
    kit.up()
    t = kit.timings
    print(f"\n[upstream] Trainer {trainer_version} + JobSet {kit.jobset_version} up in {t.total:.1f}s "
          f"(render {t.render:.1f}s, CRDs {t.crds:.1f}s, managers {t.managers:.1f}s, webhooks {t.webhooks:.1f}s)")
    yield kit
    kit.down()


@pytest.fixture(scope="class")
def namespace(api, kit, trainer_version):
    name = f"tc-upstream-{slug(trainer_version)}"
    ensure_namespace(api, name)
    return name


@live
@pytest.mark.parametrize("trainer_version", list(RELEASES), ids=list(RELEASES), scope="class")
class TestUpstreamKit:
    def test_pairs_the_jobset_release_trainer_requires(self, kit, trainer_version):
        assert kit.builds["trainer"].version == trainer_version
        assert kit.jobset_version == RELEASES[trainer_version]
        # The commit comes from the module proxy's .info (Origin), which a proxy may leave out.
        assert kit.describe()["trainer"]["commit"] in ("", TRAINER_COMMITS[trainer_version])
        assert kit.unprobed_webhooks == []
        for manager in kit.managers.values():
            assert manager.running()

    def test_webhooks_point_at_loopback_with_the_upstream_paths(self, api, kit):
        from kubernetes import client

        config = client.AdmissionregistrationV1Api(api).read_validating_webhook_configuration(
            "validator.trainer.kubeflow.org")
        urls = {w.name: w.client_config.url for w in config.webhooks}
        trainer_url = kit.managers["trainer"].webhook_url
        assert urls == {name: trainer_url + path for name, path in WEBHOOK_PATHS.items()}

    def test_torch_trainjob_becomes_a_jobset_and_jobs(self, api, kit, namespace, trainer_version):
        from kubernetes import client

        runtime = f"tc-torch-{slug(trainer_version)}"
        create(api, cluster_runtime(runtime, {"numNodes": 1, "torch": {}}, [replicated_job("node", "trainer")]))
        created = create_trainjob(api, train_job("torch", runtime, num_nodes=2), namespace)

        def jobset():
            items = custom(api).list_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", namespace, "jobsets")["items"]
            return next((j for j in items if j["metadata"]["name"] == "torch"), None)

        js = wait_for(jobset, "the Trainer controller to create JobSet torch")
        owner = js["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "TrainJob", "torch", created["metadata"]["uid"], True)
        # numNodes 2 from the TrainJob becomes the node PodSet count: parallelism and completions.
        node = next(r for r in js["spec"]["replicatedJobs"] if r["name"] == "node")
        assert (node["template"]["spec"]["parallelism"], node["template"]["spec"]["completions"]) == (2, 2)

        batch = client.BatchV1Api(api)

        def jobs():
            return batch.list_namespaced_job(namespace, label_selector="jobset.sigs.k8s.io/jobset-name=torch").items

        # JobSet names its Jobs <jobset>-<replicatedJob>-<index>; one replica of "node".
        found = wait_for(jobs, "the JobSet controller to create the Jobs of JobSet torch")
        assert [j.metadata.name for j in found] == ["torch-node-0"]
        assert found[0].metadata.owner_references[0].kind == "JobSet"
        assert (found[0].spec.parallelism, found[0].spec.completions) == (2, 2)

    def test_mpi_trainjob_without_launcher_is_denied_by_the_upstream_webhook(self, api, kit, namespace, trainer_version):
        from kubernetes.client.exceptions import ApiException

        runtime = f"tc-mpi-node-only-{slug(trainer_version)}"
        mpi = {"numNodes": 1, "mpi": {"runLauncherAsNode": True}}
        create(api, cluster_runtime(runtime, mpi, [replicated_job("node", "trainer")]))

        with pytest.raises(ApiException) as denied:
            create_trainjob(api, train_job("mpi-two-nodes", runtime, num_nodes=2), namespace)
        assert denied.value.status == 403
        assert json.loads(denied.value.body)["message"] == MPI_DENIAL

        # Same runtime, numNodes 1: the check does not apply (test vector "... has only 1 numNodes").
        create_trainjob(api, train_job("mpi-one-node", runtime, num_nodes=1), namespace)

    def test_teardown_leaves_nothing_behind(self, api, kit):
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        pids = [m.popen.pid for m in kit.managers.values()]
        state_dir = kit.state_dir
        kit.down()
        print(f"\n[upstream] teardown {kit.timings.teardown:.1f}s")
        ext = client.ApiextensionsV1Api(api)
        crds = {c.metadata.name for c in ext.list_custom_resource_definition().items}
        assert not {n for n in crds if n.endswith((".trainer.kubeflow.org", ".jobset.x-k8s.io"))}
        admission = client.AdmissionregistrationV1Api(api)
        names = {c.metadata.name for c in admission.list_validating_webhook_configuration().items}
        names |= {c.metadata.name for c in admission.list_mutating_webhook_configuration().items}
        assert not names & {"validator.trainer.kubeflow.org", "defaulter.trainer.kubeflow.org",
                            "jobset-validating-webhook-configuration", "jobset-mutating-webhook-configuration"}
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists(), f"manager process {pid} still there"
        assert not state_dir.exists()
        # Pods are admitted again without the (now stopped) JobSet pod webhooks.
        pod = {"metadata": {"name": "after-teardown", "labels": {"jobset.sigs.k8s.io/jobset-name": "x"}},
               "spec": {"containers": [{"name": "c", "image": "registry.invalid/x:1"}]}}
        try:
            client.CoreV1Api(api).create_namespaced_pod("default", pod, dry_run="All")
        except ApiException as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"pod creation still blocked after teardown: {exc.status} {exc.body}")


@live
def test_manager_that_dies_at_start_fails_up_with_its_log_and_leaves_nothing(cluster, api, monkeypatch):
    from kubernetes import client

    import dataclasses

    from conformance.upstream import UpstreamStartError, projects

    real = projects.TRAINER.manager

    def broken(context):
        manager = real(context)
        manager.argv.append("--no-such-flag")  # Go's flag package exits 2 on it
        return manager

    monkeypatch.setitem(projects.PROJECTS, "trainer", dataclasses.replace(projects.TRAINER, manager=broken))
    kit = UpstreamKit(cluster.kubeconfig, "v2.3.0")
    with pytest.raises(UpstreamStartError) as error:
        kit.up()
    assert "trainer manager v2.3.0 exited (code 2)" in str(error.value)
    assert "flag provided but not defined: -no-such-flag" in str(error.value)
    crds = {c.metadata.name for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items}
    assert not {n for n in crds if n.endswith((".trainer.kubeflow.org", ".jobset.x-k8s.io"))}
    assert not kit.managers["jobset"].running()
    assert not kit.state_dir.exists()


# ---------------------------------------------------------------------- Training Operator, MPI Operator

#: Training Operator release -> its commit (the tag's, from the module proxy; a proxy may leave it out).
TRAINING_OPERATOR_RELEASES = ["v1.9.2", "v1.8.1"]
PYTORCHJOB_WEBHOOK = "validator.pytorchjob.training-operator.kubeflow.org"


def pytorch_job(name: str, master_replicas: int = 1, workers: int = 1) -> dict:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "registry.invalid/pytorch:1"}]}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": master_replicas, "template": template},
                                             "Worker": {"replicas": workers, "template": template}}}}


@pytest.fixture(scope="class")
def project_kit(cluster, project, release):
    kit = UpstreamKit(cluster.kubeconfig, release, project=project)
    kit.up()
    print(f"\n[upstream] {project} {release} up in {kit.timings.total:.1f}s")
    yield kit
    kit.down()


@live
@pytest.mark.parametrize("release", TRAINING_OPERATOR_RELEASES, scope="class")
@pytest.mark.parametrize("project", ["training-operator"], scope="class")
class TestTrainingOperator:
    def test_only_the_pytorchjob_crd_and_webhook_are_installed_on_loopback(self, api, project_kit, release):
        from kubernetes import client

        assert kit_builds(project_kit) == {"training-operator": release}
        assert [c["metadata"]["name"] for c in project_kit.manifests["training-operator"].crds] == [
            "pytorchjobs.kubeflow.org"]
        config = client.AdmissionregistrationV1Api(api).read_validating_webhook_configuration(
            "validator.training-operator.kubeflow.org")
        assert {w.name: w.client_config.url for w in config.webhooks} == {
            PYTORCHJOB_WEBHOOK: project_kit.managers["training-operator"].webhook_url + "/validate-kubeflow-org-v1-pytorchjob"}
        # cert-controller kept our CA (it injects the Secret's ca.crt into the configuration).
        ca = (project_kit.state_dir / "ca.crt").read_bytes()
        import base64
        assert base64.b64decode(config.webhooks[0].client_config.ca_bundle) == ca
        assert project_kit.unprobed_webhooks == []

    def test_master_replicas_2_is_denied_by_the_upstream_webhook(self, api, project_kit):
        from kubernetes.client.exceptions import ApiException

        ensure_namespace(api, "tc-upstream-pt")
        with pytest.raises(ApiException) as denied:
            create(api, pytorch_job("two-masters", master_replicas=2), "tc-upstream-pt")
        assert denied.value.status == 403
        # A.4 V4: the Master must have exactly one replica.
        assert json.loads(denied.value.body)["message"] == (
            f'admission webhook "{PYTORCHJOB_WEBHOOK}" denied the request: '
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1")

    def test_a_pytorchjob_gets_a_pod_and_a_service_per_replica(self, api, project_kit, release):
        from kubernetes import client

        namespace = f"tc-upstream-pt-{slug(release)}"
        ensure_namespace(api, namespace)
        create(api, pytorch_job("pt"), namespace)
        core = client.CoreV1Api(api)
        selector = "training.kubeflow.org/job-name=pt"
        pods = wait_for(lambda: len(core.list_namespaced_pod(namespace, label_selector=selector).items) == 2 and
                        core.list_namespaced_pod(namespace, label_selector=selector).items, "two PyTorchJob pods")
        # A.2: <job>-<type>-<index>, a headless Service of the same name each.
        assert sorted(p.metadata.name for p in pods) == ["pt-master-0", "pt-worker-0"]
        services = wait_for(lambda: core.list_namespaced_service(namespace, label_selector=selector).items,
                            "the PyTorchJob Services")
        assert sorted((s.metadata.name, s.spec.cluster_ip) for s in services) == [
            ("pt-master-0", "None"), ("pt-worker-0", "None")]

    def test_teardown_leaves_nothing_behind(self, api, project_kit):
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        pid = project_kit.managers["training-operator"].popen.pid
        project_kit.down()
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items}
        assert "pytorchjobs.kubeflow.org" not in crds
        names = {c.metadata.name for c in client.AdmissionregistrationV1Api(api).list_validating_webhook_configuration().items}
        assert "validator.training-operator.kubeflow.org" not in names
        with pytest.raises(ApiException) as gone:
            client.CoreV1Api(api).read_namespace("kubeflow")
        assert gone.value.status == 404
        assert not Path(f"/proc/{pid}").exists()
        placeholder = Path("/tmp/k8s-webhook-server/serving-certs/tls.crt")  # only ever looked at; ours goes again
        assert not placeholder.exists() or placeholder.read_bytes() != project_kit._pki.cert


def kit_builds(kit) -> dict[str, str]:
    return {name: build.version for name, build in kit.builds.items() if name != "kustomize"}


@live
@pytest.mark.parametrize("release", ["v0.6.0"], scope="class")
@pytest.mark.parametrize("project", ["mpi-operator"], scope="class")
class TestMPIOperator:
    def test_an_mpijob_gets_its_service_configmap_secret_workers_and_launcher(self, api, project_kit):
        from kubernetes import client

        assert kit_builds(project_kit) == {"mpi-operator": "v0.6.0"}
        assert project_kit.manifests["mpi-operator"].webhook_configurations == []  # v0.6.0 has no webhooks
        namespace = "tc-upstream-mpi"
        ensure_namespace(api, namespace)
        template = {"spec": {"containers": [{"name": "mpi", "image": "registry.invalid/mpi:1"}]}}
        create(api, {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi"},
                     "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": template},
                                                  "Worker": {"replicas": 2, "template": template}}}}, namespace)
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        # B.0/B.2: Service <job>, ConfigMap <job>-config, Secret <job>-ssh, workers <job>-worker-<i>, Job <job>-launcher.
        wait_for(lambda: batch.list_namespaced_job(namespace).items, "the launcher Job", timeout=90)
        assert [j.metadata.name for j in batch.list_namespaced_job(namespace).items] == ["pi-launcher"]
        assert "pi" in {s.metadata.name for s in core.list_namespaced_service(namespace).items}
        assert "pi-config" in {c.metadata.name for c in core.list_namespaced_config_map(namespace).items}
        assert "pi-ssh" in {s.metadata.name for s in core.list_namespaced_secret(namespace).items}
        workers = core.list_namespaced_pod(namespace, label_selector="training.kubeflow.org/job-role=worker").items
        assert sorted(p.metadata.name for p in workers) == ["pi-worker-0", "pi-worker-1"]

    def test_teardown_leaves_nothing_behind(self, api, project_kit):
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        pid = project_kit.managers["mpi-operator"].popen.pid
        project_kit.down()
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items}
        assert "mpijobs.kubeflow.org" not in crds
        with pytest.raises(ApiException) as gone:  # its leader-election Lease went with its namespace
            client.CoreV1Api(api).read_namespace("mpi-operator")
        assert gone.value.status == 404
        assert not Path(f"/proc/{pid}").exists()


@live
def test_a_manager_that_exits_is_started_again(cluster, api):
    """As the kubelet restarts a Deployment's container: v1.8.1 exits on a panic in Reconcile."""
    import os
    import signal

    kit = UpstreamKit(cluster.kubeconfig, "v0.6.0", project="mpi-operator")
    kit.up()
    try:
        manager = kit.managers["mpi-operator"]
        first = manager.popen.pid
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: manager.restarts == 1 and manager.popen.pid != first, "the kit to start it again", timeout=30)
        kit.wait_ready(60)
        assert kit.restarts() == {"mpi-operator": 1} and manager.exits == [-signal.SIGKILL]
    finally:
        kit.down()


# ---------------------------------------------------------------------- LeaderWorkerSet

LWS_WEBHOOK_PATHS = {  # lws-volcano-upstream.md A.4 "Webhook registrations"
    "lws-mutating-webhook-configuration": {"mleaderworkerset.kb.io": "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
                                           "mpod.kb.io": "/mutate--v1-pod"},
    "lws-validating-webhook-configuration": {"vleaderworkerset.kb.io": "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
                                             "vpod.kb.io": "/validate--v1-pod"},
}


def leader_worker_set(name: str, replicas: int, size: int, annotations: dict | None = None) -> dict:
    template = {"spec": {"containers": [{"name": "lws", "image": "registry.invalid/lws:1"}]}}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": name, **({"annotations": annotations} if annotations else {})},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": {"size": size, "workerTemplate": template}}}


@live
@pytest.mark.parametrize("release", ["v0.7.0"], scope="class")
@pytest.mark.parametrize("project", ["lws"], scope="class")
class TestLeaderWorkerSet:
    def test_its_crd_and_four_webhooks_are_installed_on_loopback(self, api, project_kit):
        from kubernetes import client

        assert kit_builds(project_kit) == {"lws": "v0.7.0"}
        assert [c["metadata"]["name"] for c in project_kit.manifests["lws"].crds] == [
            "leaderworkersets.leaderworkerset.x-k8s.io"]
        admission = client.AdmissionregistrationV1Api(api)
        url = project_kit.managers["lws"].webhook_url
        for name, paths in LWS_WEBHOOK_PATHS.items():
            read = (admission.read_mutating_webhook_configuration if "mutating" in name
                    else admission.read_validating_webhook_configuration)
            assert {w.name: w.client_config.url for w in read(name).webhooks} == {
                hook: url + path for hook, path in paths.items()}
        assert project_kit.unprobed_webhooks == []

    def test_subgroup_exclusive_topology_without_a_subgroup_policy_is_denied_by_the_upstream_webhook(
            self, api, project_kit):
        from kubernetes.client.exceptions import ApiException

        ensure_namespace(api, "tc-upstream-lws")
        key = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
        with pytest.raises(ApiException) as denied:
            create(api, leader_worker_set("no-subgroup", 1, 2, {key: "kubernetes.io/hostname"}), "tc-upstream-lws")
        assert denied.value.status == 403
        # A.4 validator: generalValidate, field.Invalid on the annotation.
        assert json.loads(denied.value.body)["message"] == (
            'admission webhook "vleaderworkerset.kb.io" denied the request: '
            f'metadata.annotations.{key}: Invalid value: "kubernetes.io/hostname": '
            "cannot have subgroup-exclusive-topology without subGroupSize set")

    def test_a_leaderworkerset_becomes_its_leader_statefulset(self, api, project_kit):
        from kubernetes import client

        namespace = "tc-upstream-lws-sts"
        ensure_namespace(api, namespace)
        created = create(api, leader_worker_set("lws", replicas=2, size=3), namespace)
        apps, core = client.AppsV1Api(api), client.CoreV1Api(api)

        def leader_set():
            items = apps.list_namespaced_stateful_set(namespace).items
            return next((s for s in items if s.metadata.name == "lws"), None)

        # A.1: the leader StatefulSet is named after the LWS, one leader per group (replicas).
        sts = wait_for(leader_set, "the LWS controller to create StatefulSet lws")
        owner = sts.metadata.owner_references[0]
        assert (owner.kind, owner.name, owner.uid, owner.controller) == (
            "LeaderWorkerSet", "lws", created["metadata"]["uid"], True)
        assert sts.spec.replicas == 2
        assert sts.spec.template.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
        assert sts.spec.template.metadata.annotations["leaderworkerset.sigs.k8s.io/size"] == "3"
        # kube-controller-manager makes the leader pods lws-0 and lws-1; mpod.kb.io gives each
        # its group index (from the name) and the LWS env.
        pods = wait_for(lambda: len(core.list_namespaced_pod(namespace).items) >= 2 and
                        core.list_namespaced_pod(namespace, label_selector="leaderworkerset.sigs.k8s.io/worker-index=0").items,
                        "the leader pods")
        leaders = {p.metadata.name: p for p in pods}
        assert {n: p.metadata.labels.get("leaderworkerset.sigs.k8s.io/group-index") for n, p in leaders.items()} == {
            "lws-0": "0", "lws-1": "1"}
        env = {e.name: e.value for e in leaders["lws-1"].spec.containers[0].env}
        assert env["LWS_GROUP_SIZE"] == "3" and env["LWS_WORKER_INDEX"] == "0"

    def test_teardown_leaves_nothing_behind(self, api, project_kit):
        from kubernetes import client

        pid = project_kit.managers["lws"].popen.pid
        project_kit.down()
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(api).list_custom_resource_definition().items}
        assert "leaderworkersets.leaderworkerset.x-k8s.io" not in crds
        admission = client.AdmissionregistrationV1Api(api)
        names = {c.metadata.name for c in admission.list_validating_webhook_configuration().items}
        names |= {c.metadata.name for c in admission.list_mutating_webhook_configuration().items}
        assert not names & set(LWS_WEBHOOK_PATHS)
        assert not Path(f"/proc/{pid}").exists()


# ---------------------------------------------------------------------- Volcano

VOLCANO_CRDS = {"jobs.batch.volcano.sh", "commands.bus.volcano.sh", "podgroups.scheduling.volcano.sh",
                "queues.scheduling.volcano.sh", "numatopologies.nodeinfo.volcano.sh"}


@pytest.fixture(scope="class")
def volcano_plane():
    """A plane of its own, without the volcano-binder stand-in: vc-scheduler binds Volcano's pods."""
    with LocalControlPlane(volcano_binder=False) as plane:
        yield plane


@pytest.fixture(scope="class")
def volcano_api(volcano_plane):
    with volcano_plane.api_client() as client:
        yield client


@pytest.fixture(scope="class")
def volcano_kit(volcano_plane):
    kit = UpstreamKit(volcano_plane.kubeconfig, "v1.10.0", project="volcano")
    kit.up()
    t = kit.timings
    print(f"\n[upstream] volcano v1.10.0 up in {t.total:.1f}s (CRDs {t.crds:.1f}s, managers {t.managers:.1f}s, "
          f"webhooks {t.webhooks:.1f}s)")
    yield kit
    kit.down()


def volcano_pytorch_job(name: str, tasks: dict[str, int], **spec) -> dict:
    """A Volcano Job with the pytorch plugin (default arguments) and one task per (name, replicas)."""
    def task(task_name: str, replicas: int) -> dict:
        return {"name": task_name, "replicas": replicas,
                "template": {"spec": {"restartPolicy": "OnFailure",
                                      "containers": [{"name": task_name, "image": "registry.invalid/pytorch:1"}]}}}

    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"schedulerName": "volcano", "plugins": {"pytorch": []},
                     "tasks": [task(n, r) for n, r in tasks.items()], **spec}}


@live
class TestVolcano:
    def test_three_managers_its_crds_and_seven_webhooks_on_loopback(self, volcano_api, volcano_kit, volcano_plane):
        from kubernetes import client

        assert kit_builds(volcano_kit) == {"volcano": "v1.10.0"}
        assert "kustomize" not in volcano_kit.builds  # plain CRD files and the kit's own configurations
        assert list(volcano_kit.managers) == ["vc-webhook-manager", "vc-controller-manager", "vc-scheduler"]
        assert all(m.running() for m in volcano_kit.managers.values())
        assert "volcano-binder" not in volcano_plane.components
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(volcano_api).list_custom_resource_definition().items}
        assert VOLCANO_CRDS <= crds
        admission = client.AdmissionregistrationV1Api(volcano_api)
        url = volcano_kit.managers["vc-webhook-manager"].webhook_url
        jobs = admission.read_validating_webhook_configuration("volcano-admission-service-jobs-validate")
        assert [(w.name, w.client_config.url) for w in jobs.webhooks] == [("validatejob.volcano.sh", url + "/jobs/validate")]
        pods = admission.read_mutating_webhook_configuration("volcano-admission-service-pods-mutate")
        assert [(w.name, w.failure_policy) for w in pods.webhooks] == [("mutatepod.volcano.sh", "Fail")]
        assert volcano_kit.unprobed_webhooks == []

    def test_maxretry_below_zero_is_denied_by_validatejob(self, volcano_api, volcano_kit):
        from kubernetes.client.exceptions import ApiException

        ensure_namespace(volcano_api, "tc-upstream-volcano")
        with pytest.raises(ApiException) as denied:
            create(volcano_api, volcano_pytorch_job("bad", {"master": 1}, maxRetry=-1), "tc-upstream-volcano")
        # admit_job.go validateJobCreate answers Allowed false with a Status of no code, which the
        # apiserver makes 400 (apiserver pkg/admission/plugin/webhook/errors ToStatusErr: "don't return
        # < 400 status codes along with a rejection")
        assert denied.value.status == 400
        assert json.loads(denied.value.body)["message"] == (
            'admission webhook "validatejob.volcano.sh" denied the request: \'maxRetry\' cannot be less than zero.')

    def test_a_pytorch_job_gets_every_task_summed_as_world_size(self, volcano_api, volcano_kit):
        """v1.10.0's pytorch plugin sums every task's replicas into WORLD_SIZE (getTotalReplicas, the
        bug volcano#4281 fixed in v1.12.0): master 1 + worker 2 + extra 2 = 5 on every pod, where v1.12
        says 3. mutatejob.volcano.sh defaults maxRetry 3, the queue and the svc plugin."""
        from kubernetes import client

        namespace = "tc-upstream-volcano-pt"
        ensure_namespace(volcano_api, namespace)
        created = create(volcano_api, volcano_pytorch_job("pt", {"master": 1, "worker": 2, "extra": 2}), namespace)
        assert (created["spec"]["maxRetry"], created["spec"]["queue"], created["spec"]["minAvailable"]) == (3, "default", 5)
        assert set(created["spec"]["plugins"]) == {"pytorch", "svc"}
        core = client.CoreV1Api(volcano_api)
        def bound():
            found = [p for p in core.list_namespaced_pod(namespace).items if p.spec.node_name]
            return found if len(found) == 5 else None

        pods = wait_for(bound, "five pods, bound by vc-scheduler", timeout=90)
        env = {p.metadata.name: {e.name: e.value for e in p.spec.containers[0].env or []} for p in pods}
        assert sorted(env) == ["pt-extra-0", "pt-extra-1", "pt-master-0", "pt-worker-0", "pt-worker-1"]
        assert {name: e.get("WORLD_SIZE") for name, e in env.items()} == dict.fromkeys(env, "5")
        assert {name: e.get("RANK") for name, e in env.items()} == {
            "pt-master-0": "0", "pt-worker-0": "1", "pt-worker-1": "2", "pt-extra-0": None, "pt-extra-1": None}
        assert {e.get("MASTER_ADDR") for e in env.values()} == {"pt-master-0.pt"}
        group = custom(volcano_api).list_namespaced_custom_object(
            "scheduling.volcano.sh", "v1beta1", namespace, "podgroups")["items"]
        assert [(g["spec"]["minMember"], g["status"].get("phase")) for g in group] in ([(5, "Running")], [(5, "Inqueue")])

    def test_teardown_leaves_nothing_behind(self, volcano_api, volcano_kit):
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        pids = [m.popen.pid for m in volcano_kit.managers.values()]
        volcano_kit.down()
        crds = {c.metadata.name for c in client.ApiextensionsV1Api(volcano_api).list_custom_resource_definition().items}
        assert not crds & VOLCANO_CRDS
        admission = client.AdmissionregistrationV1Api(volcano_api)
        names = {c.metadata.name for c in admission.list_validating_webhook_configuration().items}
        names |= {c.metadata.name for c in admission.list_mutating_webhook_configuration().items}
        assert not {n for n in names if n.startswith("volcano-admission-service")}
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists()
        with pytest.raises(ApiException) as gone:
            client.CoreV1Api(volcano_api).read_namespace("volcano-system")
        assert gone.value.status == 404
        # Pods are admitted again without the (now stopped) pods webhooks, failurePolicy Fail.
        pod = {"metadata": {"name": "after-teardown"},
               "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "registry.invalid/x:1"}]}}
        client.CoreV1Api(volcano_api).create_namespaced_pod("default", pod, dry_run="All")
