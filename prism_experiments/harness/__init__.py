"""The Hydra + MLflow harness: one job per run, one parent run per sweep."""
