"""Kubernetes resource quantities (``resource.Quantity``), as far as the reconciler needs them.

Upstream reads CPU and GPU counts with ``Quantity.Value()``, which rounds *up* to an integer
(``2.5`` and ``2500m`` give 3, ``0.7`` gives 1). We parse into an exact ``Fraction`` so that the
rounding happens once, at the end, exactly as it does in Go.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")


class QuantityError(ValueError):
    pass


def parse(value: str | int | float) -> Fraction:
    """Exact value of a quantity such as ``"2500m"``, ``"1.5"``, ``"16Gi"``, ``4``."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must match the regular expression, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(1) in {".", "+", "-", ""}:
        raise QuantityError(f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {value!r}")
    number, exponent, suffix = match.groups()
    base = Fraction(number)
    if exponent:
        return base * Fraction(10) ** int(exponent[1:])
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix or ""]


def value(quantity: str | int | float) -> int:
    """``Quantity.Value()``: the integer value, rounded up (away from zero for positives)."""
    return math.ceil(parse(quantity))
