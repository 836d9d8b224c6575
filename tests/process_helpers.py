"""Process checks shared by the fault-injection tests."""

from __future__ import annotations


def gone_or_zombie(pid: int) -> bool:
    """True once the process has exited (a zombie waiting for a reaper counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
