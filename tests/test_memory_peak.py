"""A sweep worker runs several jobs: each job's logged peak (`log_peak_gb`) must be its own, not the worker's
high-water mark of an earlier, larger job."""

from __future__ import annotations

import sys

import pytest

from prism_experiments.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and clear_refs are Linux's")
def test_reset_brings_the_peak_back_to_what_the_process_holds_now() -> None:
    block = bytearray(200_000_000)
    block[::4096] = b"x" * len(block[::4096])  # touch every page, so that it is resident
    high = peak_rss_bytes()
    del block  # a block this large is its own mapping: freeing it returns it to the kernel
    # the kernel syncs its RSS counters in batches, so the figures move by a few pages either way
    assert peak_rss_bytes() > high - 5_000_000, "without a reset the peak stays where the large block put it"
    assert reset_peak_rss()
    assert peak_rss_bytes() < high - 150_000_000
    assert peak_rss_bytes() <= current_rss_bytes() + 5_000_000
