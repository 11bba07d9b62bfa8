"""What a backend reports for one case: the objects that exist and the admission rejections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Volcano's validatejob lists the allowed lifecycle-policy events and actions by ranging over Go maps
#: (getValidEvents / getValidActions, pkg/webhooks/admission/jobs/validate/util.go), so their order
#: changes from one denial to the next: a rejection message keeps each such list sorted.
_GO_MAP_LISTS = re.compile(r"(valid (?:events|actions) are \[)([^\]]*)(\])")


def sorted_go_map_lists(message: str) -> str:
    """``message`` with the items of each ``valid events are [...]`` / ``valid actions are [...]`` sorted."""
    return _GO_MAP_LISTS.sub(lambda m: m[1] + " ".join(sorted(m[2].split())) + m[3], message)


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

    def __post_init__(self) -> None:
        self.message = sorted_go_map_lists(self.message)

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
