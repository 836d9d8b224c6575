"""Signals as interrupts: an interrupt that lands inside a finalizer is raised again, not lost."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Iterator

import pytest

from prism_experiments import processes


@pytest.fixture
def sigterm_handled() -> Iterator[None]:
    """`interrupt_on_sigterm`'s handlers for one test, then the pytest worker's own again."""
    previous_handler, previous_hook = signal.getsignal(signal.SIGTERM), sys.unraisablehook
    processes.interrupt_on_sigterm()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        sys.unraisablehook = previous_hook


class SignalledWhileFinalized:
    """An object whose finalizer is running when SIGTERM arrives (as a ZipFile's did in a sweep driver)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)  # the handler raises here, inside __del__, where Python swallows exceptions


def test_a_sigterm_during_a_finalizer_still_interrupts_the_main_thread(
    sigterm_handled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(KeyboardInterrupt) as raised:
        SignalledWhileFinalized()  # dropped at once: __del__ runs here
        gc.collect()
        time.sleep(5)  # without the hook the interrupt is gone and this sleep ends normally
    assert processes.interrupt_name(raised.value) == "SIGTERM"
    assert "Exception ignored" not in capsys.readouterr().err


def test_other_errors_in_finalizers_still_reach_the_previous_hook(sigterm_handled: None) -> None:
    seen: list[BaseException | None] = []
    processes._previous_unraisable_hook = lambda unraisable: seen.append(unraisable.exc_value)

    class Broken:
        def __del__(self) -> None:
            raise ValueError("broken finalizer")

    Broken()
    gc.collect()
    assert [type(error) for error in seen] == [ValueError]
