"""The simulation engine: world, step loop, and the settings it reads."""

from prism_experiments.simulation.config import SimulationConfig
from prism_experiments.simulation.engine import run_simulation
from prism_experiments.simulation.result import SimulationResult
from prism_experiments.simulation.settings import EngineSettings, RunSettings, StartingWorldSettings
from prism_experiments.simulation.starting_world import StartingWorld, build_starting_world

__all__ = [
    "EngineSettings",
    "RunSettings",
    "SimulationConfig",
    "SimulationResult",
    "StartingWorld",
    "StartingWorldSettings",
    "build_starting_world",
    "run_simulation",
]
