"""Signals as interrupts: an interrupt that lands inside a finalizer is raised once it returns, not lost."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
import weakref
from collections.abc import Iterator

import pytest

from prism_experiments.ops import processes


@pytest.fixture
def sigterm_handled() -> Iterator[None]:
    """`interrupt_on_sigterm`'s handler for one test, then the pytest worker's own again."""
    previous, previous_hook = signal.getsignal(signal.SIGTERM), sys.unraisablehook
    processes.interrupt_on_sigterm()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.unraisablehook = previous_hook


class SignalledWhileFinalized:
    """An object whose finalizer is running when SIGTERM arrives (as a ZipFile's did in a sweep driver)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)  # the handler runs here, inside __del__, where Python swallows what it raises


def test_a_sigterm_during_a_finalizer_interrupts_the_main_thread_once_it_returns(
    sigterm_handled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    received = len(processes.RECEIVED_SIGNALS)
    finalized_at = None
    with pytest.raises(KeyboardInterrupt) as raised:
        SignalledWhileFinalized()  # dropped at once: __del__ runs here, and sleeps to its end
        finalized_at = time.monotonic()
        gc.collect()
        time.sleep(60)  # lost, the interrupt would let this sleep end normally
    assert finalized_at is not None, "raised inside the finalizer, where Python drops it"
    # a minute's sleep against half of it: no scheduler delay on a loaded machine comes near that
    assert time.monotonic() - finalized_at < 30, "the interrupt waited for the blocking call to end"
    assert raised.value.args == ("SIGTERM",)
    assert processes.RECEIVED_SIGNALS[received:] == ["SIGTERM"], "counted once, though handled twice"
    assert "Exception ignored" not in capsys.readouterr().err


@pytest.mark.parametrize("interval_s", [0.05, 0.0], ids=["every 50 ms", "at once: while the hook still runs"])
def test_a_sigterm_during_a_weakref_callback_interrupts_the_main_thread_once_it_returns(
    sigterm_handled: None, monkeypatch: pytest.MonkeyPatch, interval_s: float
) -> None:
    """No `__del__` frame shows this one: Python drops the interrupt, and the unraisable hook re-arms it."""
    monkeypatch.setattr(processes, "RESIGNAL_INTERVAL_S", interval_s)
    received = len(processes.RECEIVED_SIGNALS)

    class Referent:
        pass

    def signalled(_ref: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)

    referent = Referent()
    watch = weakref.ref(referent, signalled)
    returned_at = None
    with pytest.raises(KeyboardInterrupt) as raised:
        del referent  # the callback runs here
        returned_at = time.monotonic()
        time.sleep(60)
    assert watch() is None and returned_at is not None, "raised inside the callback, where Python drops it"
    assert time.monotonic() - returned_at < 30 and raised.value.args == ("SIGTERM",)
    assert processes.RECEIVED_SIGNALS[received:] == ["SIGTERM"]


def test_a_sigterm_outside_a_finalizer_is_raised_at_once(sigterm_handled: None) -> None:
    with pytest.raises(KeyboardInterrupt) as raised:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert raised.value.args == ("SIGTERM",)
    assert not processes._DEFERRED


def _signal_self_and_wait(signum: int) -> str:
    """Send `signum` to this process, then give its handler bytecodes to run on: what the held block got done."""
    os.kill(os.getpid(), signum)
    for _ in range(100):  # the handler runs at the next bytecode boundary, well within these
        time.sleep(0.001)
    return "finished"


@pytest.fixture
def ctrl_c_handled() -> Iterator[None]:
    """Python's own SIGINT handler for one test (a pytest-xdist worker ignores SIGINT), then the worker's again."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize(("signum", "args"), [(signal.SIGTERM, ("SIGTERM",)), (signal.SIGINT, ())])
def test_an_interrupt_inside_a_hold_is_raised_when_the_block_ends_not_inside_it(
    sigterm_handled: None, ctrl_c_handled: None, signum: int, args: tuple[str, ...]
) -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt) as raised, processes.interrupts_held():
        done.append(_signal_self_and_wait(signum))
    assert done == ["finished"], "the held block ran to its end"
    assert raised.value.args == args  # SIGINT: Python's own bare form, which a job reports as Ctrl-C
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Python's own SIGINT handler is back"


def test_an_error_inside_a_hold_with_an_interrupt_noted_raises_the_interrupt_from_it(sigterm_handled: None) -> None:
    with pytest.raises(KeyboardInterrupt) as raised, processes.interrupts_held():
        _signal_self_and_wait(signal.SIGTERM)
        raise TypeError("a library's own error after the signal")
    assert raised.value.args == ("SIGTERM",) and isinstance(raised.value.__cause__, TypeError)


def test_a_hold_with_no_interrupt_changes_nothing(sigterm_handled: None) -> None:
    with processes.interrupts_held():
        value = 1
    assert value == 1 and processes._HELD is None
    with pytest.raises(KeyboardInterrupt):  # outside a hold, the handler raises at once again
        _signal_self_and_wait(signal.SIGTERM)
