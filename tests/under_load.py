"""Run a pytest command twice, idle and then with every core kept busy by other processes (`make test-timing`).

A test whose outcome depends on the machine's speed (a step count that "should" outlast a kill, a deadline a slow
machine misses) passes on one machine and fails on another: running it both ways on one machine shows it. The load
is `stress-ng --cpu <cores>` where stress-ng is installed (Debian's package), else one Python busy loop per core; it
is started and stopped by this script, by PID.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


@contextmanager
def cores_kept_busy(cores: int) -> Iterator[str]:
    """`cores` CPU-bound processes for the duration; yields what they are."""
    if shutil.which("stress-ng"):
        burners = [subprocess.Popen(["stress-ng", "--cpu", str(cores), "--quiet"], start_new_session=True)]
        what = f"stress-ng --cpu {cores}"
    else:
        loop = [sys.executable, "-c", "while True: pass"]
        burners = [subprocess.Popen(loop, start_new_session=True) for _ in range(cores)]
        what = f"{cores} Python busy loops"
    try:
        yield what
    finally:
        for burner in burners:
            os.killpg(burner.pid, signal.SIGKILL)  # its own session: stress-ng's workers go with it
            burner.wait()


def run_pytest(args: Sequence[str]) -> tuple[int, float]:
    """pytest's exit code and wall seconds."""
    started = time.monotonic()
    code = subprocess.run([sys.executable, "-m", "pytest", *args]).returncode
    return code, time.monotonic() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="busy processes (default: every core)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="what pytest runs (after --)")
    args = parser.parse_args(argv)
    pytest_args = [arg for arg in args.pytest_args if arg != "--"] or ["tests"]
    results = []
    print(f"under_load: 1/2, idle (load average {os.getloadavg()[0]:.1f}): pytest {' '.join(pytest_args)}", flush=True)
    results.append(("idle", *run_pytest(pytest_args)))
    with cores_kept_busy(args.cores) as load:
        print(f"under_load: 2/2, every core busy ({load}): pytest {' '.join(pytest_args)}", flush=True)
        results.append((f"loaded ({load})", *run_pytest(pytest_args)))
    for name, code, seconds in results:
        print(f"under_load: {name}: {'passed' if code == 0 else f'FAILED (exit {code})'} in {seconds:.0f} s")
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
