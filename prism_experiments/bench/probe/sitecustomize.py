"""Start-up hook of benchmark child processes: install the probe when PRISM_BENCH_PROBE_DIR is set."""

import os

if os.environ.get("PRISM_BENCH_PROBE_DIR"):
    try:
        from prism_experiments.bench.probe.hooks import install

        install(os.environ["PRISM_BENCH_PROBE_DIR"])
    except Exception as exc:  # a broken probe must not break the run it watches
        import sys

        print(f"prism bench probe not installed: {exc}", file=sys.stderr)
