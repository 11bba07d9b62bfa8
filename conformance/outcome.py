"""What a backend reports for one case: the objects that exist and the admission rejections."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RejectionRecord:
    kind: str
    name: str
    namespace: str | None
    code: int
    reason: str
    message: str
    #: Field errors when the backend knows them (render does; live parses the Status details).
    errors: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}: {self.code} {self.reason}: {self.message}"

    def to_golden(self) -> dict:
        return {"object": f"{self.kind} {self.name}", "code": self.code, "reason": self.reason, "message": self.message}


@dataclass
class Outcome:
    objects: list[dict]
    rejections: list[RejectionRecord] = field(default_factory=list)
    #: Problems with the case itself (e.g. an input of an unknown kind): the case fails.
    input_errors: list[str] = field(default_factory=list)
    #: Errors the operator's reconcilers reported (render: recorded by the reference reconciler).
    reconcile_errors: list[str] = field(default_factory=list)
    #: Scenario steps: ``never`` patterns seen while the step settled (each a failure).
    never_violations: list[str] = field(default_factory=list)
    #: Events the controllers recorded (dicts: type, reason, kind, namespace, name, message); for a
    #: scenario step, the step's own. Checked by ``expect.events`` only, never part of a golden.
    events: list[dict] = field(default_factory=list)
