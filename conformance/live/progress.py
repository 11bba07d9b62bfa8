"""Where a live run is: cases done / total, in flight, elapsed and an estimate, per lane's profile.

A live table takes minutes, and pytest can only report a case once every earlier one (in item
order) is judged, so the pool itself tells this display about every case that starts or ends.
In a terminal it is one line kept up to date at the bottom (``rich``); in a CI log it is a plain
line every ``PLAIN_EVERY`` seconds and one whenever a profile is done, so logs stay readable.

The estimate weighs cases by :func:`conformance.backends.live.case_cost` (a scenario step or a
thousand pods weigh more than an admission row) and assumes each lane keeps its pace so far.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from rich.console import Console
from rich.live import Live
from rich.text import Text

#: Seconds between two plain progress lines (not a terminal).
PLAIN_EVERY = 30.0
#: Redraws per second of the terminal line.
REFRESH = 2


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


@dataclass
class _Profile:
    lane: int
    total: int = 0
    done: int = 0
    running: int = 0
    errors: int = 0
    cost: float = 0.0
    cost_done: float = 0.0


@dataclass
class Tally:
    """Counts per profile, fed with the pool's start/end events; renders the progress line."""

    profiles: dict[str, _Profile] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    started: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        if self.started is None:
            self.started = self.clock()

    def add(self, profile: str, lane: int, cost: float) -> None:
        entry = self.profiles.setdefault(profile, _Profile(lane))
        entry.total += 1
        entry.cost += cost

    def on_event(self, event: str, profile: str, cost: float, failed: bool = False,
                 lane: int | None = None) -> str | None:
        """Record a start or an end; returns a line worth logging (a profile just finished). A
        start names the lane that runs the case: a floating profile may end up on another lane
        than the one planned."""
        with self._lock:
            entry = self.profiles[profile]
            if lane is not None:
                entry.lane = lane
            if event == "start":
                entry.running += 1
                return None
            entry.running -= 1
            entry.done += 1
            entry.cost_done += cost
            entry.errors += failed
            if entry.done == entry.total:
                errors = f", {entry.errors} could not run" if entry.errors else ""
                return f"live: {profile} done, {entry.total} cases{errors} ({_clock(self.elapsed())})"
            return None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float | None:
        """Seconds left: per lane, the cost still to run at the lane's pace so far; the slowest
        lane's. None while a lane with work left has finished nothing yet."""
        elapsed = self.elapsed()
        lanes: dict[int, tuple[float, float]] = {}
        for entry in self.profiles.values():
            done, left = lanes.get(entry.lane, (0.0, 0.0))
            lanes[entry.lane] = (done + entry.cost_done, left + entry.cost - entry.cost_done)
        worst = 0.0
        for done, left in lanes.values():
            if left <= 0:
                continue
            if done <= 0:
                return None
            worst = max(worst, left * elapsed / done)
        return worst

    def summary(self) -> str:
        with self._lock:
            total = sum(p.total for p in self.profiles.values())
            errors = sum(p.errors for p in self.profiles.values())
        lanes = len({p.lane for p in self.profiles.values()})
        could_not = f", {errors} could not run" if errors else ""
        return (f"live: {total} cases of {len(self.profiles)} profile(s) in {_clock(self.elapsed())} "
                f"on {lanes} cluster(s){could_not}")

    def line(self) -> str:
        with self._lock:
            done = sum(p.done for p in self.profiles.values())
            total = sum(p.total for p in self.profiles.values())
            running = sum(p.running for p in self.profiles.values())
            current = [f"{name} {p.done}/{p.total}" for name, p in self.profiles.items() if 0 < p.done + p.running and p.done < p.total]
            remaining = self.remaining()
        left = "estimating" if remaining is None else f"~{_clock(remaining)} left"
        parts = [f"live: {done}/{total} cases", f"{running} in flight", *current,
                 f"{_clock(self.elapsed())} elapsed, {left}"]
        return " | ".join(parts)


class LiveProgress:
    """Shows a :class:`Tally` while a pool runs (``attach`` to the pool, ``stop`` at the end)."""

    def __init__(self, tally: Tally, stream=None):
        self.tally = tally
        self.console = Console(file=stream or sys.stderr, highlight=False)
        self._live: Live | None = None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def on_event(self, event: str, profile: str, cost: float, failed: bool = False, lane: int | None = None) -> None:
        note = self.tally.on_event(event, profile, cost, failed, lane)
        if note and not self.console.is_terminal:
            self.console.print(note, soft_wrap=True)

    def start(self) -> "LiveProgress":
        if self.console.is_terminal:
            self._live = Live(Text(self.tally.line()), console=self.console, transient=True,
                              refresh_per_second=REFRESH, redirect_stdout=False, redirect_stderr=False)
            self._live.start()
        self.console.print(self.tally.line(), soft_wrap=True) if not self._live else None
        self._thread = threading.Thread(target=self._refresh, name="live-progress", daemon=True)
        self._thread.start()
        return self

    def _refresh(self) -> None:
        every = 1 / REFRESH if self._live else PLAIN_EVERY
        while not self._stopped.wait(every):
            if self._live:
                self._live.update(Text(self.tally.line()))
            else:
                self.console.print(self.tally.line(), soft_wrap=True)

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._live is not None:
            self._live.stop()
            self._live = None
        self.console.print(self.tally.summary(), soft_wrap=True)
