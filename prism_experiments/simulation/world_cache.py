"""A seed's starting world built once and shared by its conditions: one file per (world config, seed, code).

Common random numbers make a seed's starting world (agents, follow graph, corpus) the same for every ranking
condition, so the first run of a seed that builds it writes it to `<runs_dir>/worlds/<key>.pkl` and every later
run of that seed, in any process or launcher sharing the runs directory, loads it (docs/bench.md, section 8).
The key hashes the seed, the three config groups the world is built from, the source of the code that builds it
and the versions of the libraries its objects and draws come from, so any change to one of them misses the old
file. Written atomically (a temporary file moved into place): parallel workers building the same world each write
a whole file and a reader never sees half of one. Worlds read from a user's graph, population or corpus files are
not kept (their reads have their own per-process cache, simulation/world_files.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pydantic

from prism_experiments.simulation.settings import StartingWorldSettings
from prism_experiments.simulation.starting_world import StartingWorld, build_starting_world
from prism_experiments.simulation.world_files import edge_options, population_options

log = logging.getLogger(__name__)
#: bump when the file's layout changes without a change to the code `_code_digest` reads
FORMAT_VERSION = 1
#: the packages whose code decides a starting world (their source is part of the key)
_WORLD_CODE = (
    "agents",
    "corpus",
    "domain",
    "network",
    "politics",
    "random_streams.py",
    "simulation/starting_world.py",
    "simulation/world_files.py",
)
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def world_key(cfg: StartingWorldSettings) -> str:
    """Identity of a starting world's config: the seed and the three groups it is built from (not the ranker)."""
    parts = {
        "seed": cfg.seed,
        "agents": cfg.agents.model_dump(mode="json"),
        "network": cfg.network.model_dump(mode="json"),
        "corpus": cfg.corpus.model_dump(mode="json", exclude=set()),
    }
    return json.dumps(parts, sort_keys=True, default=str)


@cache
def _code_digest() -> str:
    """sha256 of the source of the code that builds a world, and of the versions of what its objects come from."""
    digest = hashlib.sha256(f"{FORMAT_VERSION} numpy {np.__version__} pydantic {pydantic.VERSION}".encode())
    for name in _WORLD_CODE:
        root = _PACKAGE_ROOT / name
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            digest.update(str(path.relative_to(_PACKAGE_ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def world_file(cfg: StartingWorldSettings, worlds_dir: Path) -> Path | None:
    """Where the world of `cfg` is kept; None for a world read from a user's files."""
    if cfg.corpus.source != "synthetic" or edge_options(cfg.network) or population_options(cfg.agents):
        return None
    key = hashlib.sha256(f"{_code_digest()}\n{world_key(cfg)}".encode()).hexdigest()[:32]
    return worlds_dir / f"{key}.pkl"


def shared_starting_world(cfg: StartingWorldSettings, worlds_dir: Path | None) -> StartingWorld:
    """The kept world of `cfg` when there is one, else `build_starting_world(cfg)`, kept for the next run."""
    path = world_file(cfg, worlds_dir) if worlds_dir is not None else None
    if path is None:
        return build_starting_world(cfg)
    try:
        with path.open("rb") as handle:
            world = pickle.load(handle)  # the project's own file, written below
        if isinstance(world, StartingWorld):
            log.info("starting world of seed %d loaded from %s", cfg.seed, path)
            return world
    except FileNotFoundError:
        pass
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        log.warning("starting world %s unreadable (%s): building it again", path, exc)
    world = build_starting_world(cfg)
    _write_atomically(path, world)
    return world


def _write_atomically(path: Path, world: StartingWorld) -> None:
    """A whole file or none; a world that cannot be written (a full or read-only disk) is only not shared."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".partial", dir=path.parent)
    except OSError as exc:
        log.warning("starting world not kept (%s)", exc)
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(world, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, path)
    except OSError as exc:
        log.warning("starting world not kept (%s)", exc)
    finally:
        Path(partial).unlink(missing_ok=True)
