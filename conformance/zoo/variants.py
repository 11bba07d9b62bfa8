"""The registry of zoo variants and the two ways a variant may swap code in."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Callable, ContextManager, Iterator


@dataclass(frozen=True)
class Variant:
    name: str
    suite: str
    #: What the buggy implementation does wrong, in one sentence.
    bug: str
    #: The upstream issue/PR the bug comes from.
    seed: str
    applied: Callable[[], ContextManager[None]]


@contextlib.contextmanager
def swapped_plugin(plugins: list, original, **hooks) -> Iterator[None]:
    """Replace ``original`` in the ``plugins`` list by a copy with some hooks changed."""
    index = plugins.index(original)
    plugins[index] = dataclasses.replace(original, **hooks)
    try:
        yield
    finally:
        plugins[index] = original


@contextlib.contextmanager
def patched(module, name: str, replacement) -> Iterator[None]:
    """Replace one module-level function that a plugin hook calls."""
    original = getattr(module, name)
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)


def _all() -> list[Variant]:
    from . import jobset, lws, mpijob, pytorchjob, trainer, volcano  # imported here: variant modules import this one
    return [*trainer.VARIANTS, *volcano.VARIANTS, *jobset.VARIANTS, *mpijob.VARIANTS, *pytorchjob.VARIANTS,
            *lws.VARIANTS]


VARIANTS: list[Variant] = _all()
