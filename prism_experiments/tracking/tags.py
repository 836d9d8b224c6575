"""Every tag a PRISM run carries in MLflow, the run kinds, and filter strings over them.

These names are the store's schema: the harness writes them, the analysis and the bench read them.
"""

from __future__ import annotations

KIND_TAG = "prism.kind"
CONDITION_TAG = "prism.condition"
SEED_TAG = "prism.seed"
SWEEP_ID_TAG = "prism.sweep_id"
CONFIG_HASH_TAG = "prism.config_hash"
GIT_COMMIT_TAG = "prism.git_commit"
OVERRIDES_TAG = "prism.overrides"
ERROR_TAG = "prism.error"
JOBS_TAG = "prism.jobs"
JOBS_TO_RUN_TAG = "prism.jobs_to_run"
VARYING_TAG = "prism.varying"
COMPARED_RUNS_TAG = "prism.compared_runs"
#: Liveness (ops/liveness.py): who runs a RUNNING run, and when it last said it was alive.
PID_TAG = "prism.pid"
HOST_TAG = "prism.host"
HEARTBEAT_TAG = "prism.heartbeat"
#: The embedding (and LLM answer) cache the run read and wrote: a node's own on a cluster ($PRISM_CACHE_DIR).
CACHE_DIR_TAG = "prism.cache_dir"
#: The Hydra job number of a sweep's run (finds the run of a job whose process died).
JOB_NUM_TAG = "prism.job_num"
#: The input files a run read (corpus=file, network=file, agents=file): `prism.input.<group>.path` and `.sha256`.
INPUT_FILE_TAG_PREFIX = "prism.input."
#: On an agents=file run: the attributes the file gave (comma-separated); the rest were drawn with the run's seed.
AGENTS_FILE_COLUMNS_TAG = "prism.agents_file_columns"
VERSION_TAG_PREFIX = "prism.version."
TIMING_TAG_PREFIX = "prism.timing."
#: On a run that gave no impression or no engagement: why (`3 agents × 6 steps gave 0 impressions`); `make compare`
#: leaves it out (REQ-FAULT-2, prism_experiments/harness/empty_run.py)
EMPTY_TAG = "prism.empty"
#: MLflow's own parent-run tag (mlflow/utils/mlflow_tags.py, MLFLOW_PARENT_RUN_ID).
PARENT_RUN_TAG = "mlflow.parentRunId"

#: Calibration (prism_experiments/calibration): the target set, and a trial's number in its Optuna study.
TARGETS_TAG = "prism.targets"
TRIAL_TAG = "prism.trial"
#: the identity of the model an LLM run or an LLM check asked (the one in its response-cache keys)
LLM_MODEL_TAG = "prism.llm_model"
#: on an LLM run: the verdict of its model's newest fitness check (`prism-llm-check`), or that there is none
LLM_CHECK_TAG = "prism.llm_check"
#: on an LLM check's run (`prism-llm-check`): its verdict, the prompt style it asked in, the probe set's version
LLM_CHECK_VERDICT_TAG = "prism.llm_check.verdict"
LLM_CHECK_PROMPT_STYLE_TAG = "prism.llm_check.prompt_style"
LLM_CHECK_PROBE_SET_TAG = "prism.llm_check.probe_set"
#: on a calibration's parent run: the number of its best trial
BEST_TRIAL_TAG = "prism.best_trial"

#: MLflow's own tags on an experiment: its description (the note), its kind, and the saved views of its runs table
#: (mlflow/utils/mlflow_tags.py, MLFLOW_EXPERIMENT_NOTE / experiment kind; the UI's shared view state)
NOTE_TAG = "mlflow.note.content"
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
SHARED_VIEW_TAG_PREFIX = "mlflow.sharedViewState."

#: Values of KIND_TAG.
SIMULATION_KIND = "simulation"
SWEEP_KIND = "sweep"
ANALYSIS_KIND = "analysis"
CALIBRATION_KIND = "calibration"
CALIBRATION_TRIAL_KIND = "calibration_trial"
CALIBRATION_EVALUATION_KIND = "calibration_evaluation"
LLM_CHECK_KIND = "llm_check"
#: `make chaos`: the run that records a chaos session's rounds and violations
CHAOS_KIND = "chaos"
#: `prism-replicate`: the verdicts of the replication suite (prism_experiments/replication, docs/validation.md)
REPLICATION_KIND = "replication"

#: Replication runs: the replication set's version, each finding's verdict (`prism.verdict.<finding>`, from its
#: evidence claims), and the headline ("k of n evidence claims reproduced; m of c consistency checks hold ...").
REPLICATION_SET_TAG = "prism.replication_set"
VERDICT_TAG_PREFIX = "prism.verdict."
REPLICATION_HEADLINE_TAG = "prism.replication_headline"
#: on a replication run of `prism-replicate --full`: "full" (the findings' `full_overrides`); absent at the
#: experiment files' size
REPLICATION_SIZE_TAG = "prism.replication_size"


def tag_equals(tag: str, value: str) -> str:
    """An MLflow search clause `tags.`<tag>` = '<value>'` (the backticks allow the dots in our names)."""
    return f"tags.`{tag}` = '{value}'"
