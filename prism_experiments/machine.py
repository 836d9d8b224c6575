"""The machine a measurement ran on, as the docs' tables name it."""

from __future__ import annotations

import platform
import subprocess


def cpu_model() -> str:
    """lscpu's "Model name", else the platform's processor."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
