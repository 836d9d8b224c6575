"""The memory a process on this machine may use: the machine's, or its control group's limit where that is smaller.

Read from /proc/meminfo (MemTotal) and the cgroup files the kernel documents: v2 `memory.max`
(Documentation/admin-guide/cgroup-v2.rst), v1 `memory.limit_in_bytes` (cgroup-v1/memory.rst). Each reader takes
its paths, so that tests give it fake ones. `PRISM_MEMORY_LIMIT_GB` sets the limit instead (REQ-FAULT-1): a
budget smaller than the machine (a shared workstation), and a limit a test can set without depending on the
machine's RAM.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: the environment variable that sets the limit in GB (10^9 bytes), in place of the machine's and its cgroup's
MEMORY_LIMIT_ENV = "PRISM_MEMORY_LIMIT_GB"
PROC_MEMINFO = Path("/proc/meminfo")
PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712); anything this large is none
NO_LIMIT_FROM = 1 << 60


@dataclass(frozen=True)
class MemoryLimit:
    """A number of bytes and what sets it (`this machine's memory (MemTotal)`, a cgroup file, a job's request)."""

    bytes: int
    source: str


def machine_memory(meminfo: Path = PROC_MEMINFO) -> MemoryLimit | None:
    """The machine's memory: MemTotal of `meminfo` (kB, i.e. KiB), else sysconf's physical pages; None if neither."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return MemoryLimit(int(line.split()[1]) * 1024, "this machine's memory, MemTotal")
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # a platform without these names
        return None
    return MemoryLimit(pages * page_size, "this machine's memory") if pages > 0 and page_size > 0 else None


def _limit_file(path: Path) -> int | None:
    """The bytes a `memory.max` / `memory.limit_in_bytes` file sets; None for "max", a no-limit value or no file."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():  # "max" (v2): no limit
        return None
    value = int(text)
    return value if 0 < value < NO_LIMIT_FROM else None


def _smallest_on_the_way_up(root: Path, group: str, name: str) -> MemoryLimit | None:
    """The smallest `name` limit in the group's folder under `root` and each of its parents up to `root` (a parent's
    limit holds for its children); the root's own file alone when the group's path is not there (a container that
    mounts its own group as the root)."""
    folder = root / group.strip("/")
    candidates = [folder, *folder.parents] if folder.is_dir() else [root]
    found = [
        MemoryLimit(value, str(path))
        for path in (candidate / name for candidate in candidates if candidate == root or root in candidate.parents)
        if (value := _limit_file(path)) is not None
    ]
    return min(found, key=lambda limit: limit.bytes, default=None)


def cgroup_memory_limit(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> MemoryLimit | None:
    """The smallest memory limit of this process's control groups, v2 (`0::<path>`, under `root` or a hybrid's
    `root/unified`) and v1 (`<n>:...memory...:<path>` under `root/memory`); None when no group limits memory."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, group = rest.partition(":")
        if number == "0" and controllers == "":
            found += [_smallest_on_the_way_up(base, group, "memory.max") for base in (root, root / "unified")]
        elif "memory" in controllers.split(","):
            found.append(_smallest_on_the_way_up(root / controllers, group, "memory.limit_in_bytes"))
    return min((limit for limit in found if limit is not None), key=lambda limit: limit.bytes, default=None)


def env_memory_limit(environ: Mapping[str, str] = os.environ) -> MemoryLimit | None:
    """The limit `PRISM_MEMORY_LIMIT_GB` sets (GB, 10^9 bytes), None when unset or empty; ValueError naming the
    variable for a value that is not a positive number."""
    raw = environ.get(MEMORY_LIMIT_ENV, "").strip()
    if not raw:
        return None
    try:
        gb = float(raw)
    except ValueError:
        gb = float("nan")
    if not gb > 0 or gb == float("inf"):  # NaN, zero, negative and infinite all fail here
        raise ValueError(f"{MEMORY_LIMIT_ENV}: expected a positive number of GB, got {raw!r}")
    return MemoryLimit(round(gb * 1e9), f"{MEMORY_LIMIT_ENV}={raw}")


def process_memory_limit(
    meminfo: Path = PROC_MEMINFO,
    proc_cgroup: Path = PROC_CGROUP,
    root: Path = CGROUP_ROOT,
    environ: Mapping[str, str] = os.environ,
) -> MemoryLimit | None:
    """What this process may use: `PRISM_MEMORY_LIMIT_GB` where it is set (it replaces the rest: a test's limit
    must not depend on the machine), else the machine's memory or its cgroup's limit, the smaller; None if neither
    is known. ValueError for an unreadable `PRISM_MEMORY_LIMIT_GB`."""
    if (override := env_memory_limit(environ)) is not None:
        return override
    found = [limit for limit in (machine_memory(meminfo), cgroup_memory_limit(proc_cgroup, root)) if limit is not None]
    return min(found, key=lambda limit: limit.bytes, default=None)


def slurm_memory_bytes(value: object) -> int | None:
    """A SLURM memory request in bytes: a number is MB (SLURM's default unit, MiB), or a number with a K, M, G or T
    suffix (sbatch(1), `--mem`); None for none or one this cannot read."""
    text = str(value).strip().upper() if value is not None else ""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    unit = units.get(text[-1:], 0)
    number = text[:-1] if unit else text
    try:
        amount = float(number)
    except ValueError:
        return None
    return round(amount * (unit or units["M"])) if amount > 0 else None


@dataclass(frozen=True)
class MemoryPlan:
    """How a sweep's jobs share memory: how many run at once and within which limit (None: this process's)."""

    jobs_at_once: int
    #: the launcher setting that decides it, for the line that names it (`hydra.launcher.n_jobs=2`)
    setting: str
    limit: MemoryLimit | None = None
    #: False when the jobs run where the driver cannot see the memory (a Ray cluster, SLURM with no memory request)
    known: bool = True
