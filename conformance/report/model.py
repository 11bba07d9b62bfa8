"""The ConformanceReport: what it holds, how results roll up, and the exit-code contract.

The shape follows Gateway API's ``ConformanceReport`` (kubernetes-sigs/gateway-api
``conformance/apis/v1``): ``implementation``, ``date``, and ``profiles[]`` whose ``core`` and
``extended`` blocks each carry ``result``, ``statistics {Passed, Failed, Skipped}``,
``failedTests`` and ``skippedTests``. Our own fields: ``kubernetesVersion`` (what the backend ran
against), ``harnessVersion``, ``backend``, ``operator`` (``reference`` = this project's reconciler,
``external`` = a vendor's operator), ``selection`` (the ``--profile``/``--level``/``-k`` filters and ``--tier`` unless full,
so a partial run cannot pass for a full one), ``goldens`` (``checked``, or ``rewritten`` when the
run used ``--snapshot-update`` and so compared nothing against goldens), a profile-level
``result``, and ``errors``.

``apiVersion`` is ``training-conformance/v1alpha1``: the group is the project's name (no domain
is claimed); ``v1alpha1`` says fields may still change. Readers check apiVersion and kind.

Result rules (per profile and level, as in Gateway API's ``compileResults``):

- a level is ``failure`` if any of its cases failed or errored, ``partial`` if none failed but some
  were skipped, ``success`` otherwise; a level with no case in the run is left out;
- a profile is ``failure`` if its core level failed, ``partial`` if core was partial or extended is
  anything but success, ``success`` otherwise. Extended failures never make a profile fail.

Outcomes: ``passed``, ``failed``, ``skipped``, ``error``. ``error`` is a case that could not be
judged: a broken case file/row, a version range that covers no profile, or a pytest setup/teardown
error. Errors count under ``Failed`` in their level and are also listed in ``errors`` (broken cases
have no profile, so ``errors`` is their only place).

Exit code (:func:`exit_code`): 0 unless a core case failed or anything errored; then 1.
"""

from __future__ import annotations

from dataclasses import dataclass

API_VERSION = "training-conformance/v1alpha1"
KIND = "ConformanceReport"
LEVELS = ("core", "extended")
OUTCOMES = ("passed", "failed", "skipped", "error")
#: Profile name given to cases that belong to no profile (broken files/rows, empty version range).
NO_PROFILE = "-"


@dataclass
class CaseResult:
    """One case row run on one profile."""

    profile: str
    case_id: str  # "<table>/<row>"
    table: str
    level: str
    outcome: str
    #: Failure text (the diff), error text or skip reason; empty when passed.
    text: str = ""
    duration: float = 0.0

    @property
    def row(self) -> str:
        return self.case_id.rsplit("/", 1)[-1]

    @property
    def full_id(self) -> str:
        return f"{self.profile}:{self.case_id}"


@dataclass
class Implementation:
    organization: str
    project: str
    version: str
    url: str = ""

    @classmethod
    def parse(cls, slug: str, version: str, url: str = "") -> "Implementation":
        """``ORG/PROJECT`` → Implementation; ValueError says what is wrong."""
        org, sep, project = slug.partition("/")
        if not sep or not org or not project or "/" in project:
            raise ValueError(f"--implementation must be ORG/PROJECT, got {slug!r}")
        return cls(org, project, version, url)

    def to_dict(self) -> dict:
        return {"organization": self.organization, "project": self.project,
                "version": self.version, "url": self.url}


def level_status(results: list[CaseResult]) -> dict:
    failed = [r.case_id for r in results if r.outcome in ("failed", "error")]
    skipped = [r.case_id for r in results if r.outcome == "skipped"]
    passed = sum(r.outcome == "passed" for r in results)
    result = "failure" if failed else "partial" if skipped else "success"
    return {"result": result,
            "statistics": {"Passed": passed, "Failed": len(failed), "Skipped": len(skipped)},
            "failedTests": failed, "skippedTests": skipped}


def profile_result(core: dict | None, extended: dict | None) -> str:
    if core and core["result"] == "failure":
        return "failure"
    if (core and core["result"] == "partial") or (extended and extended["result"] != "success"):
        return "partial"
    return "success"


def _describe(level: str, status: dict) -> str:
    s = status["statistics"]
    if status["result"] == "success":
        return f"{level} succeeded ({s['Passed']} passed)"
    if status["result"] == "partial":
        return f"{level} partially succeeded ({s['Passed']} passed, {s['Skipped']} skipped)"
    return f"{level} failed ({s['Failed']} failed, {s['Passed']} passed, {s['Skipped']} skipped)"


def profile_report(name: str, results: list[CaseResult]) -> dict:
    blocks = {level: level_status([r for r in results if r.level == level])
              for level in LEVELS if any(r.level == level for r in results)}
    result = profile_result(blocks.get("core"), blocks.get("extended"))
    summary = f"{result}: " + "; ".join(_describe(level, status) for level, status in blocks.items())
    return {"name": name, "result": result, "summary": summary, **blocks}


def build_report(results: list[CaseResult], *, implementation: Implementation, date: str,
                 kubernetes_version: str, harness_version: str, backend: str, operator: str,
                 selection: dict, goldens: str = "checked", extra_errors: list[dict] | None = None) -> dict:
    """The report as plain data (dump it with YAML or JSON). ``extra_errors`` are run-level
    problems that are not cases (e.g. unused goldens), as ``{id, message}``."""
    profiles: dict[str, list[CaseResult]] = {}
    for r in results:
        if r.profile != NO_PROFILE:
            profiles.setdefault(r.profile, []).append(r)
    errors = [{"id": r.full_id, "level": r.level, "message": r.text} for r in results if r.outcome == "error"]
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "implementation": implementation.to_dict(),
        "date": date,
        "kubernetesVersion": kubernetes_version,
        "harnessVersion": harness_version,
        "backend": backend,
        "operator": operator,
        "selection": selection,
        "goldens": goldens,
        "profiles": [profile_report(name, profiles[name]) for name in sorted(profiles)],
        "errors": errors + list(extra_errors or []),
    }


class ReportError(ValueError):
    """The data is not a ConformanceReport this harness can read."""


def check_report(data, where: str = "report") -> dict:
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ReportError(f"{where}: not a {KIND} (kind is {data.get('kind') if isinstance(data, dict) else None!r})")
    if data.get("apiVersion") != API_VERSION:
        raise ReportError(f"{where}: apiVersion {data.get('apiVersion')!r} is not {API_VERSION!r}")
    if not isinstance(data.get("profiles"), list):
        raise ReportError(f"{where}: `profiles` must be a list")
    return data


def exit_code(report: dict) -> int:
    """0 unless a core case failed or anything errored (then 1). Extended failures and skips only
    show in the profile's result and summary."""
    core_failed = any((p.get("core") or {}).get("statistics", {}).get("Failed", 0) > 0
                      for p in report.get("profiles") or [])
    return 1 if core_failed or report.get("errors") else 0
