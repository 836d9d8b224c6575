"""`make bench-world`: load a 1,000,000-account / 10,000,000-follow edge list with `network.sample_nodes=10000`.

Target (REQ-PERF-5): <= 2 min and <= 4 GB on 2 cores. The edge list is the invented one of
`prism_experiments.example_world` (`--raw`: self-follows and duplicate lines left in, as in a dump), written once
under `<runs_dir>/bench/world-files/`. The load runs in a child process, as a run's config validation and world
building would: compose the config (read, validate, digest and sample the file), then build the sampled world's
population and follow graph. Its wall time, CPU time and peak RSS are printed beside the CPU model and load
average (docs/bench.md, "World files").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

from prism_experiments.bench.measure import run_child
from prism_experiments.locations import RunLayout, default_runs_dir
from prism_experiments.machine import cpu_model

NODES, EDGES, SAMPLE = 1_000_000, 10_000_000, 10_000
#: REQ-PERF-5: the load's wall time (s) and peak RSS (GB)
WALL_TARGET_S, RSS_TARGET_GB = 120.0, 4.0


def load_in_this_process(path: Path, sample: int) -> dict[str, float]:
    """Compose and validate the config (read, digest, sample), then build the world's population and graph."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.simulation.starting_world import corpus_topics
    from prism_experiments.simulation.world_files import population_and_graph, world_accounts

    started = time.perf_counter()
    cfg = compose_experiment(["network=file", f"network.path={path}", f"network.sample_nodes={sample}"])
    validated = time.perf_counter()
    topics = corpus_topics(cfg.corpus)
    accounts = world_accounts(cfg.network, cfg.agents, topics, cfg.seed)
    assert accounts is not None and accounts.edge_list is not None
    agents, graph = population_and_graph(accounts, cfg.agents, cfg.network, topics, cfg.seed)
    built = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "read_validate_sample_s": validated - started,
        "build_world_s": built - validated,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "file_accounts": float(accounts.edge_list.n_nodes),
        "file_follows": float(accounts.edge_list.n_edges),
        "world_accounts": float(len(agents)),
        "world_follows": float(graph.number_of_edges()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prism_experiments.bench.world_files", description=__doc__)
    parser.add_argument("--nodes", type=int, default=NODES)
    parser.add_argument("--edges", type=int, default=EDGES)
    parser.add_argument("--sample", type=int, default=SAMPLE)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(load_in_this_process(args.child, args.sample)))
        return 0
    directory = RunLayout(default_runs_dir()).bench_dir / "world-files"
    path = directory / f"edges-{args.nodes}-{args.edges}.txt"
    if not path.is_file():
        from prism_experiments.example_world import main as example_world

        example_world(["--out", str(directory), "--nodes", str(args.nodes), "--edges", str(args.edges),
                       "--no-population", "--raw"])  # fmt: skip
        (directory / "edges.txt").replace(path)
    log = directory / "load.log"
    child = run_child([sys.executable, "-m", "prism_experiments.bench.world_files", "--child", str(path),
                       "--sample", str(args.sample)], log)  # fmt: skip
    if child.returncode != 0:
        print(child.tail(), file=sys.stderr)
        return 1
    figures = json.loads(log.read_text().strip().splitlines()[-1])
    load = os.getloadavg()
    peak_gb = child.peak_rss_bytes / 1e9
    report = {
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in load],
        "file": str(path),
        "wall_s": round(child.wall_s, 1),
        "peak_rss_gb": round(peak_gb, 2),
        **{key: round(value, 1) for key, value in figures.items()},
    }
    print(f"CPU: {report['cpu']} ({report['cpus']} cores), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{path.name}: {figures['file_accounts']:,.0f} accounts, {figures['file_follows']:,.0f} follows")
    print(
        f"load with sample_nodes={args.sample:,}: {child.wall_s:.1f} s wall (target <= {WALL_TARGET_S:.0f}), "
        f"{figures['cpu_s']:.1f} s CPU, peak {peak_gb:.2f} GB (target <= {RSS_TARGET_GB:.0f}); read, validate, "
        f"digest and sample {figures['read_validate_sample_s']:.1f} s, world {figures['build_world_s']:.1f} s "
        f"({figures['world_accounts']:,.0f} accounts, {figures['world_follows']:,.0f} follows)"
    )
    (directory / f"{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(report, indent=2))
    met = child.wall_s <= WALL_TARGET_S and peak_gb <= RSS_TARGET_GB
    print("targets met" if met else "targets MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
