"""Benchmarks (docs/bench.md): embedding, store, ranking, simulation and sweep figures against their targets.

`python -m prism_experiments.bench [--quick]` prints one table and writes
`<runs_dir>/bench/<timestamp>.json`; see docs/bench.md. Sections are imported on demand.
"""
