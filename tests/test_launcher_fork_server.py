"""The joblib launcher's fork server: what it imports before forking workers, and its start methods."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hydra_plugins.prism_launcher.prism_joblib_launcher import WORKER_MODULES, check_start_method

IMPORT_AND_REPORT = """
import importlib, json, sys, threading
for name in sys.argv[1:]:
    importlib.import_module(name)
native = ("torch", "sentence_transformers", "chromadb", "sklearn", "onnxruntime", "llama_cpp", "ray")
print(json.dumps({"threads": threading.active_count(), "native": [m for m in native if m in sys.modules]}))
"""


def test_the_fork_server_imports_no_native_thread_pool_and_starts_no_thread() -> None:
    """A process with threads cannot fork safely, and torch must be pinned before its first use
    (prism_experiments/numerics.py): the server's imports load neither."""
    report = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_REPORT, *WORKER_MODULES], capture_output=True, text=True, check=True
    )
    found = json.loads(report.stdout.strip().splitlines()[-1])
    assert found == {"threads": 1, "native": []}


def test_an_unknown_start_method_names_the_field_and_the_allowed_values() -> None:
    assert check_start_method("loky") == "loky"
    with pytest.raises(ValueError, match=r"^hydra.launcher.start_method: 'fork' is not one of forkserver, loky$"):
        check_start_method("fork")
