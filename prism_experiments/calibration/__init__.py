"""Calibration: fit behaviour and network coefficients to published platform figures (docs/model.md, "Calibration")."""
