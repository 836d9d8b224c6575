"""The simulation engine: world, step loop, event log."""

from prism_experiments.simulation.config import SimulationConfig
from prism_experiments.simulation.engine import SimulationResult, run_simulation
from prism_experiments.simulation.event_log import EventLog
from prism_experiments.simulation.world import World, build_world

__all__ = ["EventLog", "SimulationConfig", "SimulationResult", "World", "build_world", "run_simulation"]
