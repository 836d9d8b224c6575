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
