"""Huszár et al. (PNAS 2022)'s amplification ratio of author groups: a ranker's reach of a group ÷ the reach
the reverse-chronological control gives it, minus 1.

Huszár et al. compared Twitter's personalised home timeline with a randomised control group served a
reverse-chronological feed, and measured, per set of authors, how many more users of the treatment group saw
their tweets; 0 means the algorithm gives the group the reach chronological order would. Here the "groups of
users" are the same population under two rankers with the same seed (common random numbers), the reach of a
group is the share of the agents served any feed who saw at least one of its posts, and the ratio is of reaches
summed over seeds (a ratio of means), with a paired bootstrap CI over seeds. Author groups: follower-count
deciles at the start (1 = fewest), post topics, and the author's dominant archetype. The paper's abstract was
read here; its exact definition of the ratio was not (only quoted second-hand: docs/validation.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException
from tqdm import tqdm

from prism_experiments.analysis.run_tables import RunTables
from prism_experiments.analysis.stats import bootstrap_ratio_ci, rng_for

CONTROL_MODE = "chronological"
MODE_KEY = "ranking.mode"
REACH_COLUMNS: tuple[str, ...] = ("run_id", "grouping", "group", "reach")
AMPLIFICATION_COLUMNS: tuple[str, ...] = (
    "condition", "control", "grouping", "group", "n_seeds", "reach", "reach_control", "amplification",
    "ci_low", "ci_high", "ci_method",
)  # fmt: skip
DECILES = 10


def follower_deciles(agents: pd.DataFrame) -> pd.Series:
    """Each agent's decile of follower count at the start, 1 (fewest) to 10 (most); ties broken by table order."""
    ranks = agents["n_followers_at_start"].rank(method="first")
    labels = pd.qcut(ranks, min(DECILES, len(agents)), labels=False) + 1
    return pd.Series(labels.to_numpy(dtype=int), index=agents["agent_id"].to_numpy(), name="follower_decile")


def author_groups(agents: pd.DataFrame | None) -> dict[str, pd.Series]:
    """Author id -> group, per grouping the agents table allows (older runs lack followers and archetypes)."""
    groups: dict[str, pd.Series] = {}
    if agents is None or agents.empty:
        return groups
    if "n_followers_at_start" in agents.columns:
        groups["follower_decile"] = follower_deciles(agents).map(lambda d: f"D{d:02d}")
    if "archetype" in agents.columns:
        groups["archetype"] = pd.Series(agents["archetype"].to_numpy(), index=agents["agent_id"].to_numpy())
    return groups


def group_reach(exposures: pd.DataFrame, agents: pd.DataFrame | None) -> pd.DataFrame:
    """(grouping, group, reach): the share of agents served any feed who saw >= 1 post of the group."""
    viewers = exposures["agent_id"].nunique()
    if viewers == 0:
        return pd.DataFrame(columns=["grouping", "group", "reach"])
    labels = {"topic": exposures["topic"]}
    labels |= {name: exposures["author_id"].map(mapping) for name, mapping in author_groups(agents).items()}
    frames = []
    for grouping, label in labels.items():
        seen = pd.DataFrame({"agent": exposures["agent_id"].to_numpy(), "group": label.to_numpy()}).dropna()
        reach = seen.drop_duplicates().groupby("group").size() / viewers
        frames.append(pd.DataFrame({"grouping": grouping, "group": reach.index.astype(str), "reach": reach.values}))
    return pd.concat(frames, ignore_index=True)


def load_reach(tables: RunTables, run_ids: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """REACH_COLUMNS for every run whose exposures can be read, and a warning for those that cannot."""
    frames, failed = [], []
    for run_id in tqdm(run_ids, desc="amplification: reading exposures", unit="run", leave=False):
        try:
            exposures = tables.table(run_id, "exposures", ("agent_id", "author_id", "topic"))
        except (MlflowException, OSError, KeyError):
            failed.append(run_id)
            continue
        try:
            agents: pd.DataFrame | None = tables.table(run_id, "agents")
        except (MlflowException, OSError, KeyError):
            agents = None
        frames.append(group_reach(exposures, agents).assign(run_id=run_id))
    warnings = (
        [f"amplification: no readable tables/exposures.parquet for {len(failed)} run(s), left out: "
         f"{', '.join(failed)}"] if failed else []
    )  # fmt: skip
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(REACH_COLUMNS))
    return table.reindex(columns=list(REACH_COLUMNS)), warnings


def control_of(tidy: pd.DataFrame, condition_keys: Sequence[str]) -> dict[str, str]:
    """Each condition's chronological control: the condition with mode chronological that agrees with it on every
    key outside `ranking.` (chronological has no ranking knobs); none when that is not exactly one condition."""
    if MODE_KEY not in condition_keys:
        return {}
    others = [key for key in condition_keys if not key.startswith("ranking.")]
    per_condition = tidy.drop_duplicates("condition").set_index("condition")
    controls = per_condition.loc[per_condition[MODE_KEY].astype(str) == CONTROL_MODE]
    pairs = {}
    for condition, row in per_condition.iterrows():
        if str(row[MODE_KEY]) == CONTROL_MODE:
            continue
        match = (
            controls.loc[(controls[others].astype(str) == row[others].astype(str)).all(axis=1)] if others else controls
        )
        if len(match) == 1:
            pairs[str(condition)] = str(match.index[0])
    return pairs


def amplification_table(
    reach: pd.DataFrame,
    tidy: pd.DataFrame,
    controls: Mapping[str, str],
    bootstrap_seed: int = 0,
    n_resamples: int = 9999,
) -> pd.DataFrame:
    """AMPLIFICATION_COLUMNS per (condition, grouping, group), over the seeds both it and its control ran.

    A group a run never showed has reach 0 there.
    """
    runs = tidy[["run_id", "condition", "seed"]]
    merged = reach.merge(runs, on="run_id")
    rows = []
    for condition, control in controls.items():
        seeds = sorted(
            set(runs.loc[runs["condition"] == condition, "seed"]) & set(runs.loc[runs["condition"] == control, "seed"])
        )
        if not seeds:
            continue
        for (grouping, group), part in merged.groupby(["grouping", "group"], sort=True):
            wide = part.pivot_table(index="seed", columns="condition", values="reach", aggfunc="first")
            wide = wide.reindex(index=seeds, columns=[condition, control]).fillna(0.0)
            x, y = wide[condition].to_numpy(dtype=float), wide[control].to_numpy(dtype=float)
            ci = bootstrap_ratio_ci(x, y, rng_for(bootstrap_seed, "amplification", condition, grouping, str(group)),
                                    n_resamples=n_resamples)  # fmt: skip
            rows.append({"condition": condition, "control": control, "grouping": grouping, "group": group,
                         "n_seeds": len(seeds), "reach": float(np.mean(x)), "reach_control": float(np.mean(y)),
                         "amplification": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
                         "ci_method": ci.method})  # fmt: skip
    return pd.DataFrame(rows, columns=list(AMPLIFICATION_COLUMNS))
