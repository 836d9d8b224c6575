"""This process's resident memory, now and at its peak (from /proc, else getrusage)."""

from __future__ import annotations

import resource
import sys
from pathlib import Path


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def current_rss_bytes() -> int:
    """Resident set size now (VmRSS), else the peak from getrusage where /proc is missing."""
    kib = _status_kib("VmRSS")
    return kib * 1024 if kib is not None else peak_rss_bytes()


def peak_rss_bytes() -> int:
    """This process's peak resident set size (VmHWM; ru_maxrss is KiB on Linux, bytes on macOS)."""
    kib = _status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def reset_peak_rss() -> bool:
    """Set this process's peak (VmHWM) back to its resident size now, so that a sweep worker's next job reports its
    own peak, not an earlier job's: Linux's `/proc/self/clear_refs` value 5 (proc(5)). False where that fails."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True
