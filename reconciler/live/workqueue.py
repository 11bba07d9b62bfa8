"""A work queue with client-go's guarantees: an item waits at most once, an item being processed
is never handed out twice (a new add while it runs queues it again afterwards), and retries can
be delayed."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from typing import Hashable


class WorkQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._queue: deque = deque()
        self._dirty: set = set()
        self._processing: set = set()
        self._delayed: list = []
        self._counter = itertools.count()
        self._shutdown = False

    def add(self, item: Hashable) -> None:
        with self._cond:
            self._add(item)

    def _add(self, item: Hashable) -> None:
        if self._shutdown or item in self._dirty:
            return
        self._dirty.add(item)
        if item not in self._processing:
            self._queue.append(item)
            self._cond.notify()

    def add_after(self, item: Hashable, seconds: float) -> None:
        with self._cond:
            heapq.heappush(self._delayed, (time.monotonic() + seconds, next(self._counter), item))
            self._cond.notify()

    def get(self):
        """The next item (mark it :meth:`done`), or None once shut down."""
        with self._cond:
            while True:
                now = time.monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    self._add(heapq.heappop(self._delayed)[2])
                if self._shutdown:
                    return None
                if self._queue:
                    item = self._queue.popleft()
                    self._processing.add(item)
                    self._dirty.discard(item)
                    return item
                wait = self._delayed[0][0] - now if self._delayed else None
                self._cond.wait(wait)

    def done(self, item: Hashable) -> None:
        with self._cond:
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                self._cond.notify()

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    def pending(self, horizon: float) -> int:
        """Items queued or being processed, plus delayed ones due within ``horizon`` seconds (a
        retry after a conflict is work under way; one backed off for seconds after an error is not)."""
        with self._cond:
            due = time.monotonic() + horizon
            return len(self._queue) + len(self._processing) + sum(1 for when, _, _ in self._delayed if when <= due)

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue) + len(self._processing) + len(self._delayed)
