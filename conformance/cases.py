"""Load case tables: YAML files validated by ``schema/case-table.schema.json``.

A broken file or row never stops the run: it becomes a :class:`BrokenCase` that fails on its own,
with a message naming the file and the row, while every other row still runs.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jsonpatch
import jsonschema
import yaml

from reconciler.profiles import PROFILES

from . import yamlio

SCHEMA_PATH = Path(__file__).parent / "schema" / "case-table.schema.json"


@lru_cache(maxsize=None)
def _schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def _validator(ref: str | None = None):
    schema = _schema()
    if ref:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{ref}"}
    return jsonschema.Draft202012Validator(schema)


@dataclass
class Step:
    """One step of a scenario row: an action (``apply`` manifests, an ``update``, a ``delete`` or a ``fault``), then settling."""

    number: int
    name: str
    apply: list[dict] | None = None
    #: ``{apiVersion, kind, name, namespace?, patch}``: a JSON Patch a client applies to an existing object.
    update: dict | None = None
    #: ``{apiVersion, kind, name, namespace?, propagationPolicy?}``: an object a client deletes.
    delete: dict | None = None
    fault: dict | None = None
    repeat: int = 1
    expect: dict = field(default_factory=dict)
    never: list[dict] = field(default_factory=list)
    #: Live backend: seconds this step may take to settle (None: the session's timeout).
    live_timeout: float | None = None
    #: Seconds between the previous step's settling and this step's action (0: none).
    wait_before: int = 0

    @property
    def label(self) -> str:
        return f"step {self.number} ({self.name})"


@dataclass
class Case:
    """One row, ready to run on one or more profiles."""

    table: str
    id: str
    title: str
    suite: str
    versions: str
    level: str
    inputs: list[dict]
    expect: dict
    source: str  # "cases/trainer/mpi-topology.yaml, row 3 (id …)"
    path: Path
    #: A scenario row has steps instead of one apply (then ``inputs`` is empty, ``expect`` too).
    steps: list[Step] | None = None
    #: "full" or "summary" (counts instead of every object), see the schema.
    golden: str = "full"
    #: Why the row is too slow for a pull request (``--tier pr`` skips it saying so); None: it is not.
    slow: str | None = None

    @property
    def full_id(self) -> str:
        return f"{self.table}/{self.id}"

    def profiles(self) -> list[str]:
        return [p.name for p in PROFILES.values() if p.suite == self.suite and version_in_range(p.version, self.versions)]


@dataclass
class BrokenCase:
    """A file or row that could not be loaded; it fails with ``error`` when run."""

    full_id: str
    error: str
    path: Path
    table: str = ""
    level: str = "core"
    suite: str = ""
    title: str = ""

    @property
    def id(self) -> str:
        return self.full_id.rsplit("/", 1)[-1]

    def profiles(self) -> list[str]:
        return ["-"]


@dataclass
class Table:
    path: Path
    cases: list[Case | BrokenCase] = field(default_factory=list)


# ------------------------------------------------------------------ versions

_CLAUSE = re.compile(r"^\s*(==|>=|<=|>|<|!=)\s*([0-9]+(?:\.[0-9]+)*)\s*$")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def version_in_range(version: tuple[int, ...], spec: str) -> bool:
    """``(2, 3)`` in ``">=2.1,<2.4"``; versions compare as padded integer tuples."""
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError(f"bad version clause {clause!r}")
        op, wanted = match.group(1), _version(match.group(2))
        width = max(len(version), len(wanted))
        have = version + (0,) * (width - len(version))
        want = wanted + (0,) * (width - len(wanted))
        ok = {"==": have == want, "!=": have != want, ">=": have >= want, "<=": have <= want,
              ">": have > want, "<": have < want}[op]
        if not ok:
            return False
    return True


# ------------------------------------------------------------------ loading

def discover(root: Path) -> list[Path]:
    """Every table file under ``root``; ``_bases`` folders hold manifests, not tables."""
    return sorted(p for p in root.rglob("*.yaml") if not any(part.startswith("_") for part in p.relative_to(root).parts))


def load_all(root: Path) -> list[Case | BrokenCase]:
    cases: list[Case | BrokenCase] = []
    # Test ids and goldens are per profile, and a profile belongs to one suite: two suites may
    # both have an `admission` table with a row `x`; one suite may not.
    seen: dict[tuple[str, str], str] = {}
    for path in discover(root):
        for case in load_table(path, root).cases:
            key = (case.suite, case.full_id)
            if isinstance(case, Case) and key in seen:
                cases.append(BrokenCase(case.full_id + "#duplicate", f"{case.source}: duplicate case id "
                                        f"{case.full_id!r} in suite {case.suite!r} (first defined at {seen[key]})",
                                        path, table=case.table, suite=case.suite))
                continue
            seen[key] = getattr(case, "source", str(path))
            cases.append(case)
    return cases


def load_table(path: Path, root: Path) -> Table:
    rel = _display(path, root)
    table = Table(path)
    try:
        doc = yamlio.load(path.read_text())
    except yaml.YAMLError as exc:
        table.cases.append(BrokenCase(f"{rel}#file", f"{rel}: malformed YAML: {exc}", path))
        return table
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        table.cases.append(BrokenCase(f"{rel}#file", f"{rel}: not a case table: {_explain(errors[0])}", path))
        return table
    defaults = doc.get("defaults", {})
    bases = doc.get("bases", {})
    row_validator = _validator("row")
    for index, row in enumerate(doc["rows"], start=1):
        label = f"{rel}, row {index}" + (f" (id {row.get('id')!r})" if isinstance(row, dict) and row.get("id") else "")
        row_errors = sorted(row_validator.iter_errors(row), key=lambda e: list(e.path))
        if row_errors:
            table.cases.append(BrokenCase(f"{doc['table']}/{_row_key(row, index)}", f"{label}: {_explain(row_errors[0])}",
                                          path, table=doc["table"], suite=doc["suite"]))
            continue
        try:
            steps = _build_steps(row, defaults, bases, path) if "steps" in row else None
            inputs = [] if steps is not None else _build_inputs(row, defaults, bases, path)
        except CaseError as exc:
            table.cases.append(BrokenCase(f"{doc['table']}/{row['id']}", f"{label}: {exc}", path,
                                          table=doc["table"], suite=doc["suite"], title=row["title"]))
            continue
        table.cases.append(Case(
            table=doc["table"], id=row["id"], title=row["title"], suite=doc["suite"],
            versions=row.get("versions", defaults.get("versions", ">=0")),
            level=row.get("level", defaults.get("level", "core")),
            inputs=inputs, expect=row.get("expect", {}), source=label, path=path,
            steps=steps, golden=row.get("golden", "full"), slow=row.get("slow"),
        ))
    return table


class CaseError(Exception):
    pass


def _row_specs(row: dict, defaults: dict) -> list[dict]:
    specs = copy.deepcopy(row.get("inputs") or defaults.get("inputs") or [])
    return specs + copy.deepcopy(row.get("add") or [])


def _build_inputs(row: dict, defaults: dict, bases: dict, path: Path) -> list[dict]:
    specs = _row_specs(row, defaults)
    if not specs:
        raise CaseError("no inputs: give `inputs` in the row or in the table defaults")
    unused_patches = set(row.get("patch", {})) - {s.get("base") for s in specs}
    if unused_patches:
        raise CaseError(f"`patch` names base(s) {sorted(unused_patches)} that no input uses")
    return _resolve(specs, row, bases, path)


def _build_steps(row: dict, defaults: dict, bases: dict, path: Path) -> list[Step]:
    """Resolve every step's inputs now, so a bad base or patch breaks the row before it runs."""
    used_specs: list[dict] = []
    steps = []
    for number, raw in enumerate(row["steps"], start=1):
        step = Step(number=number, name=raw.get("name") or _step_name(raw), repeat=raw.get("repeat", 1),
                    expect=raw.get("expect") or {}, never=raw.get("never") or [],
                    live_timeout=raw.get("liveTimeout"), wait_before=raw.get("waitBefore", 0))
        if "apply" in raw:
            specs = _row_specs(row, defaults) if raw["apply"] == "inputs" else copy.deepcopy(raw["apply"])
            if not specs:
                raise CaseError(f"{step.label}: `apply: inputs` but the row and the table defaults give no inputs")
            used_specs += specs
            try:
                step.apply = _resolve(specs, row, bases, path)
            except CaseError as exc:
                raise CaseError(f"{step.label}: {exc}") from None
        elif "update" in raw:
            step.update = copy.deepcopy(raw["update"])
        elif "delete" in raw:
            step.delete = copy.deepcopy(raw["delete"])
        elif "fault" in raw:
            step.fault = {k: v for k, v in raw.items() if k not in _STEP_KEYS + ("repeat",)}
        steps.append(step)
    unused_patches = set(row.get("patch", {})) - {s.get("base") for s in used_specs}
    if unused_patches:
        raise CaseError(f"`patch` names base(s) {sorted(unused_patches)} that no step applies")
    return steps


#: Keys of a step that are about the step, not its fault (a default name shows the fault's own
#: parameters - ``repeat`` included - and leaves these out).
_STEP_KEYS = ("name", "expect", "never", "liveTimeout", "waitBefore")


def _step_name(raw: dict) -> str:
    if "apply" in raw:
        return "apply inputs" if raw["apply"] == "inputs" else "apply"
    if "update" in raw:
        return f"update {raw['update']['kind']} {raw['update']['name']}"
    if "delete" in raw:
        return f"delete {raw['delete']['kind']} {raw['delete']['name']}"
    if "fault" in raw:
        params = [f"{k}={v}" for k, v in raw.items() if k not in _STEP_KEYS + ("fault",)]
        return " ".join([raw["fault"], *params])
    return "check"


def _resolve(specs: list[dict], row: dict, bases: dict, path: Path) -> list[dict]:
    manifests = []
    for spec in specs:
        if "manifest" in spec:
            # An inline manifest (often a YAML anchor shared by rows) may carry its own patch too.
            manifests.append(_patched(spec["manifest"], [spec.get("patch") or []], "the inline manifest"))
            continue
        name = spec["base"]
        if name not in bases:
            raise CaseError(f"unknown base {name!r}; the table defines {sorted(bases)}")
        manifest = _load_base(path.parent / bases[name])
        ops_lists = [spec.get("patch") or [], row.get("patch", {}).get(name) or []]
        manifests.append(_patched(manifest, ops_lists, f"base {name!r}"))
    return manifests


def _patched(manifest: dict, ops_lists: list[list], what: str) -> dict:
    for ops in ops_lists:
        try:
            manifest = jsonpatch.apply_patch(manifest, ops)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise CaseError(f"JSON Patch on {what} failed: {exc}") from None
    bad = _non_string_key(manifest, "")
    if bad:
        raise CaseError(f"{what}: the key {bad[1]!r} at {bad[0] or '/'} is not a string - a Kubernetes object is "
                        f"JSON, whose keys are strings; quote it in YAML (\"{bad[1]}\": ...)")
    return manifest


def _non_string_key(value, path: str) -> tuple[str, object] | None:
    """The first mapping key that is no string (YAML reads null, true, 1 ... unquoted as such)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path, ("null" if key is None else key)
            found = _non_string_key(item, f"{path}/{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _non_string_key(item, f"{path}/{i}")
            if found:
                return found
    return None


@lru_cache(maxsize=None)
def _load_base_cached(path: Path) -> dict | CaseError:
    """A base, parsed once per run (rows get copies); or the error every row using it reports."""
    try:
        text = path.read_text()
    except OSError as exc:
        return CaseError(f"cannot read base {path}: {exc.strerror}")
    try:
        doc = yamlio.load(text)
    except yaml.YAMLError as exc:
        return CaseError(f"malformed YAML in base {path}: {exc}")
    if not isinstance(doc, dict) or "kind" not in doc:
        return CaseError(f"base {path} is not a Kubernetes object")
    return doc


def _load_base(path: Path) -> dict:
    doc = _load_base_cached(path)
    if isinstance(doc, CaseError):
        raise CaseError(str(doc))
    return copy.deepcopy(doc)


def _row_key(row, index: int) -> str:
    return row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else f"row-{index}"


def _explain(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{_message(error)}" + (f" (at {where})" if where else "")


def _message(error: jsonschema.ValidationError) -> str:
    """The schema's own ``x-error`` for a failed constraint, else jsonschema's message."""
    for node in (error.validator_value, error.schema):
        if isinstance(node, dict) and node.get("x-error"):
            return node["x-error"]
    return error.message


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)
