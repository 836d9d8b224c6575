"""The simulation engine: world, step loop, and the settings it reads."""

from prism_experiments.simulation.config import SimulationConfig
from prism_experiments.simulation.engine import run_simulation
from prism_experiments.simulation.result import SimulationResult
from prism_experiments.simulation.settings import EngineSettings, RunSettings, WorldSettings
from prism_experiments.simulation.world import World, build_world

__all__ = [
    "EngineSettings",
    "RunSettings",
    "SimulationConfig",
    "SimulationResult",
    "World",
    "WorldSettings",
    "build_world",
    "run_simulation",
]
