"""The live progress line: counts, the current profiles, and an estimate from each lane's pace."""

from __future__ import annotations

import io

from conformance.live.progress import LiveProgress, Tally


def _tally(now: list[float]) -> Tally:
    tally = Tally(clock=lambda: now[0])
    for profile, lane, n in (("trainer-v2.3", 0, 4), ("volcano-v1.12", 1, 2)):
        for _ in range(n):
            tally.add(profile, lane, 1.0)
    return tally


def test_the_line_counts_cases_and_estimates_from_the_slowest_lane():
    now = [0.0]
    tally = _tally(now)
    tally.on_event("start", "trainer-v2.3", 1.0)
    tally.on_event("start", "volcano-v1.12", 1.0)
    assert tally.line() == ("live: 0/6 cases | 2 in flight | trainer-v2.3 0/4 | volcano-v1.12 0/2 | "
                            "0:00 elapsed, estimating")
    now[0] = 60.0
    tally.on_event("end", "trainer-v2.3", 1.0)  # lane 0: 1 of 4 in 60 s -> 3 more take 180 s
    assert tally.line().endswith("1:00 elapsed, estimating")  # lane 1 has finished nothing yet
    assert tally.on_event("end", "volcano-v1.12", 1.0) is None  # lane 1: 1 of 2 -> 60 s more
    assert tally.line() == ("live: 2/6 cases | 0 in flight | trainer-v2.3 1/4 | volcano-v1.12 1/2 | "
                            "1:00 elapsed, ~3:00 left")
    tally.on_event("start", "volcano-v1.12", 1.0)
    assert tally.on_event("end", "volcano-v1.12", 1.0, failed=True) == (
        "live: volcano-v1.12 done, 2 cases, 1 could not run (1:00)")


def test_plain_lines_when_not_a_terminal():
    now = [0.0]
    out = io.StringIO()
    shown = LiveProgress(_tally(now), stream=out).start()
    for _ in range(2):
        shown.on_event("start", "volcano-v1.12", 1.0)
        shown.on_event("end", "volcano-v1.12", 1.0)
    shown.stop()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("live: 0/6 cases | 0 in flight")
    assert "live: volcano-v1.12 done, 2 cases (0:00)" in lines
    assert lines[-1] == "live: 6 cases of 2 profile(s) in 0:00 on 2 cluster(s)"
