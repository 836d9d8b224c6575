"""`ray start` for a worker node joining a head on this machine's loopback (`make ray-node`).

Ray (2.60) refuses a second node while `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, the setting that keeps `make ray-head`
on 127.0.0.1; with it on, `ray start` rewrites 127.0.0.1, in `--address` and in `--node-ip-address` alike, to the
machine's external address (`services.resolve_ip_for_localhost`), where the loopback-only head cannot be reached.
This entry point runs Ray's own `ray start` with that one rewrite off, so a node on the same machine keeps the
loopback addresses it is given. Nothing else of Ray changes.
"""

from __future__ import annotations

import sys

from ray._private import services
from ray.scripts.scripts import main


def keep_loopback(host: str) -> str:
    """On one machine 127.0.0.1 is the address every node reaches: keep it."""
    return host


if __name__ == "__main__":
    if not hasattr(services, "resolve_ip_for_localhost"):
        sys.exit("ray-node: this Ray has no services.resolve_ip_for_localhost; see docs/cluster.md 'Two nodes'")
    services.resolve_ip_for_localhost = keep_loopback
    sys.exit(main())
