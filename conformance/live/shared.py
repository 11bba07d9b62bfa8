"""Cluster-scoped inputs shared by cases in flight together.

A case's cluster-scoped inputs (ClusterTrainingRuntimes) keep their names, so two cases that
create the same one at the same time must share it: the first creates it, the last deletes it.
:mod:`conformance.live.pool` only lets cases overlap whose manifests for a name are identical
(and whose render output of it is too), so whichever case created the object, it is the one each
of them would have created. Run one at a time, every count is 0 or 1 and this changes nothing.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Callable


class SharedInputs:
    def __init__(self):
        self._locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._guard = threading.Lock()
        self._users: dict[str, int] = defaultdict(int)

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks[key]

    def users(self, key: str) -> int:
        return self._users[key]

    def create(self, key: str, create: Callable[[], object]) -> bool:
        """Become a user of ``key``: create it unless another case in flight already did.
        Returns whether this call created it; an error of ``create`` propagates (no user added)."""
        with self._lock(key):
            if self._users[key] == 0:
                create()
                created = True
            else:
                created = False
            self._users[key] += 1
            return created

    def release(self, key: str, delete: Callable[[], object]) -> None:
        """Stop using ``key``; the last user deletes it (``delete`` may wait until it is gone)."""
        with self._lock(key):
            self._users[key] = max(0, self._users[key] - 1)
            if self._users[key] == 0:
                delete()

    def when_unused(self, key: str, action: Callable[[], object]) -> None:
        """Run ``action`` (delete a leftover of that name) only if no case in flight uses ``key``."""
        with self._lock(key):
            if self._users[key] == 0:
                action()
