"""PRISM Experiments: how feed-ranking algorithms shape what simulated people see."""

__version__ = "0.1.0"
