"""Child processes of the local control plane: start each in its own process group, stop it
(the whole group) for sure, and recognise it again by PID from another process.

Every component runs in a new session, so one ``killpg`` reaches anything it may have forked,
and a terminal's Ctrl-C reaches only the Python process, which then stops the components in
order instead of having them all die at once mid-write.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # Linux only: the kernel sends SIGKILL when the thread that started us exits, so even a
    # SIGKILLed test run leaves no control plane behind.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def spawn(argv: list[str], log_path: Path, *, die_with_parent: bool, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``argv`` in a new session, stdout and stderr appended to ``log_path``; ``env`` is
    added to this process's environment."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if die_with_parent else None,
            close_fds=True,
            env={**os.environ, **env} if env else None,
        )


def is_running(pid: int, executable: str | None = None) -> bool:
    """``pid`` is alive (not a zombie) and, if given, runs ``executable`` - so a PID the kernel
    has since handed to an unrelated process is not mistaken for ours."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rpartition(")")[2].split()[0] in ("Z", "X"):
        return False
    if executable is None:
        return True
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except OSError:
        return False
    return argv0 == executable


def cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far; None if it is gone."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def group_members(pgid: int) -> list[int]:
    """PIDs of the live processes in process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def stop_groups(groups: list[tuple[int, subprocess.Popen | None]], *, timeout: float = 10.0) -> None:
    """SIGTERM each process group ``(pgid, our Popen or None)`` at once, SIGKILL what is left
    after ``timeout``, and reap the leaders that are our children."""
    pending = list(groups)
    for sig, grace in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        for pgid, _ in pending:
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while pending:
            for _, popen in pending:
                if popen is not None:
                    popen.poll()  # reap the leader, or it lingers as a zombie
            pending = [(pgid, popen) for pgid, popen in pending if group_members(pgid)]
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        if not pending:
            break
    for _, popen in groups:
        if popen is not None:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL not delivered
                pass


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


# ---------------------------------------------------------------------- teardown at exit

#: Things with a ``down()`` that must run even if the process ends abruptly (planes, harness nodes).
_TEARDOWN: "weakref.WeakSet" = weakref.WeakSet()
_ATEXIT_INSTALLED = False
#: The termination signal already received (a second one ends the process at once).
_SIGNALLED: int | None = None


def down_at_exit(thing) -> None:
    """Call ``thing.down()`` at interpreter exit; on SIGTERM/SIGHUP, see :func:`handle_termination`."""
    global _ATEXIT_INSTALLED
    if not _ATEXIT_INSTALLED:
        atexit.register(_down_all)
        _ATEXIT_INSTALLED = True
    handle_termination()
    _TEARDOWN.add(thing)


def handle_termination() -> None:
    """Make SIGTERM and SIGHUP end this process as Ctrl-C does: a KeyboardInterrupt in the main
    thread, which unwinds through every owner's own clean-up (``with`` blocks, ``finally``,
    pytest's session end, ``atexit``: the live session's log dir, the kubernetes client's
    temporary CA files) - a signal's default action would kill us with none of that. A second
    signal tears down what is registered here and dies at once. Only signals still at their
    default are taken, and only from the main thread (where Python runs handlers); a command
    calls this early, as its threads may start the clusters."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _on_signal)


def forget_at_exit(thing) -> None:
    _TEARDOWN.discard(thing)


def _down_all() -> None:
    for thing in list(_TEARDOWN):
        try:
            thing.down()
        except Exception:  # noqa: BLE001 - the next one must still be torn down
            pass


def _on_signal(signum, _frame) -> None:
    global _SIGNALLED
    if _SIGNALLED is None:
        _SIGNALLED = signum
        raise KeyboardInterrupt(f"{signal.Signals(signum).name} received")
    _down_all()
    # Then do what the signal would have done without us.
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)
