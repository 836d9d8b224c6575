"""`make ui`: the MLflow UI on 127.0.0.1 against the project's store."""

from __future__ import annotations

import argparse
import os
import sys

from prism_experiments.paths import default_runs_dir, default_tracking_uri


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ui", description=__doc__)
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--tracking-uri", default=None)
    args = parser.parse_args(argv)
    default_runs_dir().mkdir(parents=True, exist_ok=True)
    uri = args.tracking_uri or default_tracking_uri()
    print(f"MLflow UI for {uri}\n  open http://127.0.0.1:{args.port}  (Ctrl-C stops it)", flush=True)
    command = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
               "--host", "127.0.0.1", "--port", str(args.port)]
    os.execv(sys.executable, command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
