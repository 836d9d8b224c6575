"""Hydra launcher plugins of PRISM Experiments (Hydra finds plugins only in the `hydra_plugins` namespace)."""
