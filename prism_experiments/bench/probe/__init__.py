"""Instrumentation for the processes the benchmark starts (runs, sweeps and their joblib workers).

`PYTHONPATH=<this folder>` makes every such interpreter import `sitecustomize.py` at start-up, which
(with `PRISM_BENCH_PROBE_DIR` set) wraps model loading, encoding and adding posts to an empty store
(a base-index build) to append one JSON line per event to `<probe dir>/<pid>.jsonl`. The project's code is not
changed; the benchmark reads the lines back with `read_probe`.
"""

from pathlib import Path

PROBE_DIR_ENV = "PRISM_BENCH_PROBE_DIR"
SITE_DIR = Path(__file__).resolve().parent


def probe_env(base: dict[str, str], log_dir: Path) -> dict[str, str]:
    """`base` plus what a child process needs to load the probe and log into `log_dir`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = [str(SITE_DIR)] + ([base["PYTHONPATH"]] if base.get("PYTHONPATH") else [])
    return base | {"PYTHONPATH": ":".join(path), PROBE_DIR_ENV: str(log_dir)}
