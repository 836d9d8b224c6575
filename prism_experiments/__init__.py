"""PRISM Experiments: how feed-ranking algorithms shape what simulated people see."""

import os

# MLflow 3's telemetry thread fails to fetch its config on a machine without internet and then pops
# `_MLFLOW_TELEMETRY_SESSION_ID` from os.environ while the main thread may be iterating os.environ (requests
# reads proxy variables on every HTTP call): the call fails with KeyError('_MLFLOW_TELEMETRY_SESSION_ID')
# (seen as "runs/search failed with exception '_MLFLOW_TELEMETRY_SESSION_ID'"). Off before mlflow is imported;
# a value the user set wins.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# MLflow's client prints "🏃 View run <name> at: <url>" and "🧪 View experiment at: ..." each time a run on a tracking
# server ends (one more request each): two lines per job and per run a sweep's reaper closes. The project logs its
# own line per run; a value the user set wins.
os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

__version__ = "0.1.0"
