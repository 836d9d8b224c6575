"""Statistical comparison of conditions across MLflow runs (`prism-compare`, `make compare`).

runs (MLflow -> tables) -> selection (exclusions, conditions, metrics) -> design (paired or not)
-> compare (tests, Holm, effect sizes, bootstrap CIs, trends) + cascades (CCDF, KS)
-> report (markdown, CSV, figures) -> analysis_run (logged back to MLflow).
experiment_comparison wires them; cli only parses the options. Tag names and labels come from tracking.
"""
