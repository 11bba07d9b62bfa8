"""The files of a report directory: report.yaml, junit.xml, conformance.log and submission/.

JUnit: one ``<testsuite>`` per backend, one ``<testcase>`` per case × profile with classname
``<backend>.<profile>.<table>`` and name = row id; the failure body is the whole failure text
(the field diff). JUnit viewers read a classname's dots as package separators, and profile names
have dots of their own (``trainer-v2.3``), so each part's dots are written ``_``
(``live.trainer-v2_3.torch-nproc``); the exact profile is the testcase's ``profile`` property.
We write it ourselves: pytest's junitxml names cases after the pytest node
(``test_case[profile:table/row]``), which is not the shape we want.

Submission README: the run's command lines; a live run's cluster is the user's to name, so the
``conformance`` command says ``--kubeconfig "$KUBECONFIG"`` (:data:`KUBECONFIG_PLACEHOLDER`).

Log: one ``PASSED|FAILED|SKIPPED|ERROR <profile>:<table>/<row>`` line per case (a skip followed by
`` - <reason>``: a skipped row always says why), then every
failure and error text, then ``N passed, N failed, N skipped`` (errors, including run-level ones
such as unused goldens, count as failed, as in the pytest summary line).
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from ..yamlio import dump
from . import markdown
from .model import CaseResult

# XML 1.0 forbids most control characters (an ANSI colour code in a diff would make the file unreadable).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


#: What the submission README's ``conformance`` command has for the kubeconfig of a live run.
KUBECONFIG_PLACEHOLDER = '"$KUBECONFIG"'


def classname(*parts: str) -> str:
    """``<backend>.<profile>.<table>`` with each part's own dots as ``_`` (see the module doc)."""
    return ".".join(part.replace(".", "_") for part in parts)


def _xml_text(text: str) -> str:
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _first_line(text: str, width: int = 200) -> str:
    line = next((l for l in text.strip().splitlines() if l.strip()), "")
    return _xml_text(line if len(line) <= width else line[:width - 1] + "…")


def _properties(parent: ET.Element, values: dict) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=_xml_text(str(value)))


def junit_xml(results: list[CaseResult], report: dict) -> str:
    backend = report["backend"]
    impl = report["implementation"]
    counts = {"tests": len(results), "failures": sum(r.outcome == "failed" for r in results),
              "errors": sum(r.outcome == "error" for r in results),
              "skipped": sum(r.outcome == "skipped" for r in results)}
    total_time = f"{sum(r.duration for r in results):.3f}"
    root = ET.Element("testsuites", name="training-conformance", time=total_time,
                      **{k: str(v) for k, v in counts.items()})
    suite = ET.SubElement(root, "testsuite", name=backend, timestamp=report["date"], time=total_time,
                          **{k: str(v) for k, v in counts.items()})
    _properties(suite, {"implementation": f"{impl['organization']}/{impl['project']}",
                        "implementationVersion": impl["version"], "operator": report["operator"],
                        "kubernetesVersion": report["kubernetesVersion"],
                        "harnessVersion": report["harnessVersion"]})
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=classname(backend, r.profile, r.table), name=r.row,
                             time=f"{r.duration:.3f}")
        _properties(case, {"profile": r.profile, "level": r.level, "case": r.case_id})
        if r.outcome in ("failed", "error"):
            tag = "failure" if r.outcome == "failed" else "error"
            ET.SubElement(case, tag, message=_first_line(r.text)).text = _xml_text(r.text)
        elif r.outcome == "skipped":
            ET.SubElement(case, "skipped", message=_first_line(r.text))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def log_text(results: list[CaseResult], report: dict) -> str:
    impl = report["implementation"]
    lines = [f"training-conformance {report['harnessVersion']}: {impl['organization']}/{impl['project']} "
             f"{impl['version']}, operator {report['operator']}, backend {report['backend']}, "
             f"kubernetes {report['kubernetesVersion']}, {report['date']}", ""]
    lines += [f"{r.outcome.upper()} {r.full_id}" + (f" - {' '.join(r.text.split())}" if r.outcome == "skipped" and r.text.strip()
                                                   else "") for r in results]
    problems = [(r.outcome.upper(), r.full_id, r.text) for r in results if r.outcome in ("failed", "error")]
    case_errors = {r.full_id for r in results if r.outcome == "error"}
    run_errors = [e for e in report.get("errors") or [] if e["id"] not in case_errors]
    problems += [("ERROR", e["id"], e["message"]) for e in run_errors]
    for outcome, case_id, text in problems:
        lines += ["", f"--- {outcome} {case_id}", text.rstrip()]
    passed = sum(r.outcome == "passed" for r in results)
    failed = sum(r.outcome in ("failed", "error") for r in results) + len(run_errors)
    skipped = sum(r.outcome == "skipped" for r in results)
    lines += ["", f"{passed} passed, {failed} failed, {skipped} skipped"]
    return "\n".join(lines) + "\n"


def product_yaml(report: dict) -> str:
    """CNCF k8s-conformance's PRODUCT.yaml field names, filled from the implementation block."""
    impl = report["implementation"]
    product = {"vendor": impl["organization"], "name": impl["project"], "version": impl["version"],
               "website_url": impl["url"], "type": f"training operator ({report['operator']})",
               "description": f"{impl['project']} {impl['version']} run against the training-conformance "
                              f"{report['harnessVersion']} case table on the {report['backend']} backend."}
    return dump(product)


def submission_readme(report: dict, pytest_command: str, conformance_command: str, cwd: str) -> str:
    return "\n".join([
        markdown.render(report).rstrip(),
        "",
        "## Reproduce",
        "",
        f"Harness: training-conformance {report['harnessVersion']}. From `{cwd}` this run was, exactly:",
        "",
        "```sh",
        f"cd {cwd}",
        pytest_command,
        "```",
        "",
        "The same run through the `conformance` command:",
        "",
        "```sh",
        conformance_command,
        "```",
        "",
        *([f"`{KUBECONFIG_PLACEHOLDER}`: the kubeconfig of the cluster the implementation runs in (set "
           "`KUBECONFIG` or replace it).", ""] if KUBECONFIG_PLACEHOLDER in conformance_command else []),
        "## Files",
        "",
        "- `PRODUCT.yaml`: the implementation under test (CNCF k8s-conformance field names).",
        "- `report.yaml`: the ConformanceReport (per profile: core/extended result, counts, failed and skipped ids).",
        "- `junit.xml`: one testcase per case × profile; a failure holds the full diff.",
        "- `conformance.log`: one line per case, the failure texts, and the final count.",
        "",
    ])


def write_all(report_dir: Path, results: list[CaseResult], report: dict, *, pytest_command: str,
              conformance_command: str, cwd: str) -> list[Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    files = {"report.yaml": dump(report), "junit.xml": junit_xml(results, report),
             "conformance.log": log_text(results, report)}
    written = []
    for name, text in files.items():
        (report_dir / name).write_text(text)
        written.append(report_dir / name)
    submission = report_dir / "submission"
    if submission.exists():
        shutil.rmtree(submission)  # a stale file from an earlier run must not ride along
    submission.mkdir()
    for name in files:
        shutil.copyfile(report_dir / name, submission / name)
    (submission / "PRODUCT.yaml").write_text(product_yaml(report))
    (submission / "README.md").write_text(submission_readme(report, pytest_command, conformance_command, cwd))
    return written + [submission]
