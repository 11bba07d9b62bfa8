"""A ConformanceReport as Markdown: a header, one table row per profile × level, then errors."""

from __future__ import annotations

from .model import LEVELS, exit_code


def _cell(text) -> str:
    # A "|" would end the cell and a newline the row.
    return " ".join(str(text).split()).replace("|", "\\|")


def _ids(ids: list[str], limit: int) -> str:
    shown = ", ".join(f"`{_cell(i)}`" for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _selection(selection: dict) -> str:
    parts = [f"profiles: {', '.join(selection.get('profiles') or []) or 'all'}",
             f"levels: {', '.join(selection.get('levels') or []) or 'all'}"]
    if selection.get("keyword"):
        parts.append(f"-k {selection['keyword']}")
    if selection.get("tier"):
        parts.append(f"tier {selection['tier']} (rows marked slow left out)")
    return "; ".join(parts)


def render(report: dict, heading_level: int = 1, limit: int = 20) -> str:
    impl = report.get("implementation") or {}
    h = "#" * heading_level
    name = f"{impl.get('organization', '?')}/{impl.get('project', '?')} {impl.get('version', '')}".strip()
    lines = [f"{h} Conformance report: {_cell(name)}", "",
             "| | |", "|---|---|",
             f"| Implementation | {_cell(name)}" + (f" ({_cell(impl['url'])})" if impl.get("url") else "") + " |",
             f"| Operator | {_cell(report.get('operator', ''))} |",
             f"| Backend | {_cell(report.get('backend', ''))} |",
             f"| Kubernetes | {_cell(report.get('kubernetesVersion', ''))} |",
             f"| Harness | training-conformance {_cell(report.get('harnessVersion', ''))} |",
             f"| Date | {_cell(report.get('date', ''))} |",
             f"| Selection | {_cell(_selection(report.get('selection') or {}))} |",
             f"| Goldens | {_cell(report.get('goldens', 'checked'))} |",
             "",
             "| Profile | Level | Result | Passed | Failed | Skipped | Failed tests | Skipped tests |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for profile in report.get("profiles") or []:
        for level in LEVELS:
            status = profile.get(level)
            if not status:
                continue
            s = status.get("statistics", {})
            lines.append(f"| {_cell(profile.get('name'))} | {level} | **{status.get('result')}** | {s.get('Passed', 0)} "
                         f"| {s.get('Failed', 0)} | {s.get('Skipped', 0)} | {_ids(status.get('failedTests') or [], limit)} "
                         f"| {_ids(status.get('skippedTests') or [], limit)} |")
    if not report.get("profiles"):
        lines.append("| (no case ran) | | | | | | | |")
    lines.append("")
    for profile in report.get("profiles") or []:
        lines.append(f"- **{_cell(profile.get('name'))}**: {_cell(profile.get('summary', ''))}")
    errors = report.get("errors") or []
    if errors:
        lines += ["", f"{h}# Errors ({len(errors)})", ""]
        for error in errors:
            first = (error.get("message") or "").strip().splitlines()[:1]
            lines.append(f"- `{_cell(error.get('id'))}`: {_cell(first[0] if first else '')}")
    code = exit_code(report)
    why = "no core failure, no error" if code == 0 else "a core case failed or a case errored"
    lines += ["", f"Exit code: **{code}** ({why})."]
    return "\n".join(lines) + "\n"
