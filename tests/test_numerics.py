"""The embedding model runs on pinned AVX2 numerics (prism_experiments/numerics.py), or refuses to load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prism_experiments.numerics import PINNED_CPU_NUMERICS

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
HAS_AVX512 = "avx512f" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else False


def _python(script: str) -> subprocess.CompletedProcess[str]:
    """`script` in a new interpreter without the pins in its environment (a test that loaded the model in this
    process set them here, and a child inheriting them would be pinned before its first line)."""
    environment = {k: v for k, v in os.environ.items() if k not in PINNED_CPU_NUMERICS}
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, env=environment
    )


def test_loading_the_model_pins_torch_to_avx2_kernels_and_mkl_to_its_reproducible_branch() -> None:
    done = _python(
        "import os, torch\n"
        "from prism_experiments.embeddings import load_model\n"
        "load_model('all-MiniLM-L6-v2')\n"
        "print(torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'])"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    capability, branch = done.stdout.split()[-2:]
    assert branch == "AVX2,STRICT"
    assert capability in ("AVX2", "DEFAULT") and (capability == "AVX2" or not HAS_AVX512)


def test_a_process_whose_torch_computed_before_the_pin_cannot_load_the_model() -> None:
    done = _python(
        "import torch\n"
        "torch.ones(64).sum()  # ATen picks its kernels here, before any pin\n"
        "from prism_experiments.embeddings import load_model\n"
        "load_model('all-MiniLM-L6-v2')"
    )
    if HAS_AVX512:  # torch took the AVX-512 kernels: the vectors would not be the pinned ones
        assert done.returncode != 0 and "torch chose its CPU kernels before" in done.stderr
    else:  # nothing wider than AVX2 to have taken
        assert done.returncode == 0, done.stderr[-2000:]
