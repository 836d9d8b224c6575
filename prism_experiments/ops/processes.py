"""Processes: whether one is alive, its children, stopping a process group, signals as interrupts."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (signal 0 checks without sending); a zombie, killed
    but not yet reaped by its parent (a Ray worker until the raylet waits for it), is not alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _proc_state(pid) not in ("Z", "X")


def _proc_state(pid: int) -> str | None:
    """The state letter of /proc/<pid>/stat (proc(5)); None where /proc is not there."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "X" if Path("/proc/self/stat").exists() else None  # exited since the signal 0
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]  # the command name in parentheses may hold spaces


def stop_process_group(pid: int, timeout_s: float = 30) -> None:
    """SIGTERM the group of a process started in a new session (its PID is the group id), SIGKILL after `timeout_s`."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process_alive(pid):
        try:
            os.waitpid(pid, os.WNOHANG)  # our own child would stay a zombie otherwise
        except ChildProcessError:
            pass
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)  # also whatever the group's leader left behind
    except ProcessLookupError:
        pass


def child_pids(parent: int | None = None) -> list[int]:
    """The processes whose parent is `parent` (default: this process), from /proc (proc(5))."""
    parent = os.getpid() if parent is None else parent
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            children.append(int(entry.name))
    return children


#: the signals the handlers below turned into KeyboardInterrupt, in order: a library may catch the interrupt and
#: raise a bare one (Ray's ray.wait does), and the message must still name the signal
RECEIVED_SIGNALS: list[str] = []


#: a signal whose interrupt waits for the finalizer it landed in to return (`_raise_interrupt`)
_DEFERRED: set[int] = set()


def _inside_finalizer(frame: FrameType | None) -> bool:
    """Whether the interrupted code runs inside a `__del__`, or the unraisable hook below (until its thread has
    started: a busy machine can delay that past the first 50 ms), where Python drops any exception raised."""
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code is _rearm_swallowed_interrupt.__code__:
            return True
        frame = frame.f_back
    return False


#: the interrupts noted while `interrupts_held` is active (None outside it): raised when its block exits
_HELD: list[str] | None = None


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """Raise the signal as a KeyboardInterrupt naming it. Inside a finalizer (a ZipFile's `__del__` once took
    a sweep driver's SIGTERM: Python printed the traceback and dropped it), later instead: a thread signals
    the main thread again every 50 ms until the handler runs outside any finalizer and raises. Inside
    `interrupts_held`, noted and raised when its block exits."""
    name = signal.Signals(signum).name
    with _RESIGNALLING:
        echo = _RESIGNALLED.get(signum, 0) > 0  # one of `_signal_until_raised`'s own signals
        if echo:
            _RESIGNALLED[signum] -= 1
        again = signum in _DEFERRED  # counted (and passed on to the children) when it first came
    if echo and not again:
        return  # sent just before the interrupt it repeated was raised: that one interrupt is all there is
    if not again:
        RECEIVED_SIGNALS.append(name)
    if _HELD is not None:
        _stop_resignalling(signum)
        _HELD.append(name)
        return
    if _inside_finalizer(frame):
        if not again:
            _defer(signum)
        return
    _stop_resignalling(signum)
    raise KeyboardInterrupt(name)


#: the signals `_signal_until_raised` sent that the handler has not run for yet, by signal; and the lock between
#: that thread's check-and-send and the handler's discard (re-entrant: a handler may run inside another's)
_RESIGNALLED: dict[int, int] = {}
_RESIGNALLING = threading.RLock()


def _forget_echoes() -> None:
    """A handler put in place starts with no repeat pending: one another handler took must not swallow a new signal."""
    with _RESIGNALLING:
        _RESIGNALLED.clear()


def _stop_resignalling(signum: int) -> None:
    with _RESIGNALLING:
        _DEFERRED.discard(signum)


def _defer(signum: int) -> None:
    """Mark `signum` as counted and passed on already, and have it signalled again until it is raised."""
    with _RESIGNALLING:
        _DEFERRED.add(signum)
        _RESIGNALLED[signum] = 0  # a new round of repeats: none of an earlier round is still to come
    threading.Thread(target=_signal_until_raised, args=(signum,), daemon=True).start()


#: how often a deferred interrupt is signalled again (`_signal_until_raised`), at most 200 times
RESIGNAL_INTERVAL_S = 0.05


def _signal_until_raised(signum: int, attempts: int = 200) -> None:
    # a real signal, not _thread.interrupt_main: it must also wake a blocking call (a sleep, a wait); at most
    # 200 times, in case the handler was replaced meanwhile
    main = threading.main_thread().ident
    for _ in range(attempts):
        time.sleep(RESIGNAL_INTERVAL_S)
        with _RESIGNALLING:  # never after the interrupt was raised: its repeat would count as a second signal
            if signum not in _DEFERRED or main is None:
                return
            _RESIGNALLED[signum] = _RESIGNALLED.get(signum, 0) + 1
            signal.pthread_kill(main, signum)
    _stop_resignalling(signum)  # given up: the next signal of its kind counts as new


def _rearm_swallowed_interrupt(unraisable: Any) -> None:
    """`sys.unraisablehook`: a SIGTERM interrupt raised where Python drops exceptions that no `__del__` frame
    shows (a weakref callback during garbage collection) is delivered again, as `_raise_interrupt` does."""
    error = unraisable.exc_value
    if isinstance(error, KeyboardInterrupt) and error.args == ("SIGTERM",):
        with _RESIGNALLING:
            deferred = signal.SIGTERM in _DEFERRED
        if not deferred:
            _defer(signal.SIGTERM)
        return
    _previous_unraisable_hook(unraisable)


_previous_unraisable_hook = sys.unraisablehook


def _rearm_interrupts_lost_in_callbacks() -> None:
    global _previous_unraisable_hook
    if sys.unraisablehook is not _rearm_swallowed_interrupt:
        _previous_unraisable_hook = sys.unraisablehook
        sys.unraisablehook = _rearm_swallowed_interrupt


#: children the SIGTERM forwarder leaves alone: what started them stops them after using them to stop the jobs (a
#: sweep's private Ray head: the driver interrupts the jobs its workers run, then stops it)
STOPPED_BY_OWNER: set[int] = set()


def _forward_and_raise_interrupt(signum: int, frame: FrameType | None) -> None:
    if signum not in _DEFERRED:
        for pid in set(child_pids()) - STOPPED_BY_OWNER:  # a sweep's workers: they stop as with Ctrl-C
            try:
                if os.getpgid(pid) == pid:  # started in a session of its own (a Ray head): its whole group
                    os.killpg(pid, signum)
                else:
                    os.kill(pid, signum)
            except ProcessLookupError:
                pass
    _raise_interrupt(signum, frame)


def interrupt_on_sigterm(forward_to_children: bool = False) -> None:
    """SIGTERM (`kill`, `timeout`, SLURM's scancel, Kubernetes) handled as Ctrl-C: a KeyboardInterrupt whose
    argument is "SIGTERM", in the main thread; a driver passes the signal on to its child processes first,
    as a terminal passes Ctrl-C to its whole foreground group."""
    if threading.current_thread() is threading.main_thread():
        _forget_echoes()
        signal.signal(signal.SIGTERM, _forward_and_raise_interrupt if forward_to_children else _raise_interrupt)
        _rearm_interrupts_lost_in_callbacks()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """`interrupt_on_sigterm` for the duration of a job (a worker process between jobs keeps its own handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not _forward_and_raise_interrupt:
        _forget_echoes()
        signal.signal(signal.SIGTERM, _raise_interrupt)
    _rearm_interrupts_lost_in_callbacks()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _note_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """SIGINT's handler inside `interrupts_held` where Python's own was in place: noted as Ctrl-C."""
    if _HELD is not None:
        _HELD.append("Ctrl-C")
    else:  # the block has just ended: its handler is being put back
        raise KeyboardInterrupt


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT are noted instead of raised; the first is raised as KeyboardInterrupt
    when the block exits. For a step that an interrupt must not cut in two: a run created in the store whose id
    the job does not hold yet could not be marked KILLED (docs/model.md, "Faults and recovery").

    A blocking call inside is restarted after the signal (PEP 475), so the block must be short and bounded."""
    global _HELD
    if threading.current_thread() is not threading.main_thread() or _HELD is not None:
        yield  # another thread cannot take signals; a nested hold is the outer one's
        return
    noted: list[str] = []
    own_sigint = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if own_sigint:
        signal.signal(signal.SIGINT, _note_ctrl_c)
    _HELD = noted
    try:
        yield
    except BaseException as error:
        if noted and not isinstance(error, KeyboardInterrupt):
            raise _held_interrupt(noted) from error
        raise
    finally:
        _HELD = None
        if own_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if noted:
        raise _held_interrupt(noted)


def _held_interrupt(noted: list[str]) -> KeyboardInterrupt:
    """The KeyboardInterrupt of the first interrupt noted in a hold, as the handlers would have raised it."""
    return KeyboardInterrupt() if noted[0] == "Ctrl-C" else KeyboardInterrupt(noted[0])


@contextmanager
def interrupts_raised() -> Iterator[None]:
    """For a job in a process that handles signals its own way (a Ray worker blocks SIGINT in every thread and exits
    on SIGTERM): SIGINT raises Python's KeyboardInterrupt and SIGTERM `sigterm_as_interrupt`'s, until the job returns.

    SIGINT is unblocked in this (the main) thread only: the kernel then delivers it here, where it also wakes a
    blocking call (a lock wait), not to a thread that could merely flag it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        with sigterm_as_interrupt():
            yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        signal.signal(signal.SIGINT, previous)


def interrupt_name(error: KeyboardInterrupt) -> str:
    """ "SIGTERM" for an interrupt raised by these handlers, "Ctrl-C" for Python's own SIGINT."""
    if error.args:
        return str(error.args[0])
    return RECEIVED_SIGNALS[-1] if RECEIVED_SIGNALS else "Ctrl-C"


def interrupt_behind(error: Exception, signals_before: int) -> KeyboardInterrupt | None:
    """The interrupt a library turned into `error`, if a signal arrived after `signals_before` were counted.

    numpy's structured-array comparison (`np.unique(axis=0)`) replaces any exception raised inside it,
    the handlers' KeyboardInterrupt included, with a TypeError: the signal must still end the run KILLED.
    """
    if len(RECEIVED_SIGNALS) <= signals_before:
        return None
    return KeyboardInterrupt(RECEIVED_SIGNALS[-1])


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """In a child before exec (`preexec_fn`): get `sig` when the process that started it dies, even by SIGKILL
    (Linux prctl PR_SET_PDEATHSIG, prctl(2)); elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig))  # 1 = PR_SET_PDEATHSIG
