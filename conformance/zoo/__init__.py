"""The bug zoo: known-bad variants of the reference reconciler, one historical bug each.

A conformance suite is only worth its name if it fails on the bugs that really happened. Each
:class:`Variant` swaps exactly one plugin (or one function inside a plugin) of the reference
reconciler for a buggy copy, for the duration of a ``with variant.applied():`` block; the real code
is never edited. :func:`run` runs the case table against every variant and reports which cases
caught it (their *explicit expectations* failed — goldens are not consulted, so a catch always
means a stated upstream fact was violated). A variant that no case catches is a hole in the table.
"""

from __future__ import annotations

from .variants import VARIANTS, Variant
from .runner import VariantResult, run

__all__ = ["VARIANTS", "Variant", "VariantResult", "run"]
