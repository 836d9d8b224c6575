"""The suite's own guard: a test that hangs fails with its stack after the configured timeout (pytest-timeout),
instead of holding CI until its 90-minute limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_the_timeout_guard_is_on_for_every_test(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) >= 600, "a guard far above the slowest test, not a measure"


def test_a_hanging_test_fails_with_its_stack(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text("import time\n\ndef test_hangs():\n    time.sleep(600)\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--timeout=2", str(tmp_path / "test_hangs.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode != 0 and "Timeout" in result.stdout and "time.sleep(600)" in result.stdout, result.stdout
