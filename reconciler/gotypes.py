"""Go values that appear in upstream error messages, rendered as Go renders them.

``field.Error`` prints a bad value with ``%v`` for simple types, ``String()`` for Stringers and
``%#v`` otherwise. IntOrString's ``String()`` has a pointer receiver, so a dereferenced value
prints with ``%#v`` - e.g. ``intstr.IntOrString{Type:1, IntVal:0, StrVal:"npu"}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class IntOrString:
    value: int | str

    def go_repr(self) -> str:
        if isinstance(self.value, str):
            return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:{json.dumps(self.value)}}}'
        return f'intstr.IntOrString{{Type:0, IntVal:{self.value}, StrVal:""}}'
