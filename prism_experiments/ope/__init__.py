"""Off-policy evaluation of serving policies from stochastic runs' logged propensities (docs/ope.md)."""

from prism_experiments.ope.data import OPEInputs, impression_rewards, ope_inputs, target_names
from prism_experiments.ope.estimators import ESTIMATORS, Estimate, bootstrap_estimates, doubly_robust, ips, snips

__all__ = [
    "ESTIMATORS",
    "Estimate",
    "OPEInputs",
    "bootstrap_estimates",
    "doubly_robust",
    "impression_rewards",
    "ips",
    "ope_inputs",
    "snips",
    "target_names",
]
