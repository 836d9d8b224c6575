"""CPU numerics pinned so that the model's float32 results are the same bits on every x86-64 machine.

Left to themselves, MKL (torch's matrix products), ATen's vectorised kernels (layer norm, softmax)
and oneDNN pick the widest instruction set of the CPU they find, and AVX-512 and AVX2 sum in
different orders: the same text got embeddings differing in the last bits on a Sapphire Rapids
machine (AVX-512, AMX) and on the machine the golden metrics were recorded on, which moved
`interest_similarity_mean` at the 8th digit. Pinned to AVX2 (MKL's conditional numerical
reproducibility branch, STRICT so that the thread count does not matter either), any AVX2 machine
gives the same vectors. Cost measured here: encoding 253 texts/s instead of 382 on 2 cores.
Sources: Intel oneMKL "Conditional Numerical Reproducibility" (MKL_CBWR), PyTorch
`ATEN_CPU_CAPABILITY`, oneDNN `ONEDNN_MAX_CPU_ISA`.
"""

from __future__ import annotations

import os

PINNED_CPU_NUMERICS = {"MKL_CBWR": "AVX2,STRICT", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def pin_cpu_numerics() -> None:
    """Set the pins; they take effect if set before torch's first computation in this process."""
    os.environ.update(PINNED_CPU_NUMERICS)


def pinned_kernels_in_use() -> bool:
    """False if torch dispatches to wider kernels than the pin's (it computed before the pin); a CPU
    without AVX2, or not x86, has nothing wider to fall back from."""
    import torch

    return not torch.backends.cpu.get_cpu_capability().startswith("AVX512")
