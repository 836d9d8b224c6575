"""Huszár et al. (PNAS 2022)'s amplification ratio: the reach of a set of accounts under a ranker ÷ the reach the
reverse-chronological control gives it, minus 1 (0: the reach chronological order gives; 1: double it).

Huszár et al. compared Twitter's personalised home timeline with a randomised control group served a
reverse-chronological feed, and measured, per set of authors, how many more users of the treatment group saw
their tweets, for groups of accounts (parties) and for each account alone ("individual amplification"). Here the
"groups of users" are the same population under two rankers with the same seed (common random numbers); the
reach of a set of accounts is the share of the run's population (the agents shown at least one post: the agents
active in the run) who saw at least one of its posts. Two kinds of rows:

- group rows: follower-count deciles at the start (1 = fewest), post topics, the author's dominant archetype; the
  ratio is of reaches summed over seeds (a ratio of means) with a paired bootstrap CI over seeds. A group whose
  reach is at least `SATURATED_REACH` under both arms is flagged: its ratio is near 0 by construction.
- distribution rows: the top 1 % of accounts by followers at the start, each account alone, and small random
  groups of accounts (of all accounts, and of the top decile), whose reach does not saturate; per seed the
  median, quartiles, maximum and share below 0 over the accounts (groups), then their mean over seeds with a
  bootstrap CI over seeds.

The paper's abstract, figure caption and the split into group and individual amplification were read here
(quoted source text); its Methods' formula line was not (docs/validation.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException
from tqdm import tqdm

from prism_experiments.analysis.run_tables import RunTables
from prism_experiments.analysis.stats import bootstrap_mean_ci, bootstrap_ratio_ci, rng_for

CONTROL_MODE = "chronological"
MODE_KEY = "ranking.mode"
REACH_COLUMNS: tuple[str, ...] = ("run_id", "grouping", "group", "reach")
#: `statistic` is RATIO for a group row (amplification: the ratio of mean reaches − 1), else the distribution
#: statistic the row's `amplification` holds (a share for SHARE_BELOW_0); `n_units`: accounts or groups per seed
#: with a ratio (mean over seeds), empty for a group row; `saturated`: reach >= SATURATED_REACH under both arms
AMPLIFICATION_COLUMNS: tuple[str, ...] = (
    "condition", "control", "grouping", "group", "statistic", "n_seeds", "n_units", "reach", "reach_control",
    "amplification", "ci_low", "ci_high", "ci_method", "saturated",
)  # fmt: skip
#: one row per condition, seed and unit (an account alone, or a random group) of the distribution rows
UNIT_COLUMNS: tuple[str, ...] = (
    "condition", "control", "seed", "grouping", "unit", "reach", "reach_control", "amplification",
)  # fmt: skip
DECILES = 10
#: the share of accounts, most followed at the start first, whose amplification is taken one account at a time
TOP_SHARE = 0.01
#: random groups: this many accounts each, this many groups per pool (the pool's accounts drawn without replacement
#: within a group, independently between groups), drawn by `rng_for(GROUP_DRAW_SEED, "random-groups", pool)`
GROUP_SIZE = 10
N_GROUPS = 100
GROUP_DRAW_SEED = 0
#: a reach this high under both arms leaves no room to amplify: the group is seen by (almost) everyone either way,
#: so its ratio is near 0 by construction and says nothing about the ranker
SATURATED_REACH = 0.95
#: the distribution groupings: each account of the top 1 % alone, random groups of all accounts, of the top decile
TOP_ACCOUNTS = "account_top_1pct"
RANDOM_ALL = f"random_{GROUP_SIZE}_all"
RANDOM_TOP_DECILE = f"random_{GROUP_SIZE}_top_decile"
UNIT_GROUPINGS: tuple[str, ...] = (TOP_ACCOUNTS, RANDOM_ALL, RANDOM_TOP_DECILE)
#: the `statistic` of a group row; those of a distribution row, per seed over its accounts (groups)
RATIO = "ratio"
#: what a distribution grouping's unit is, in words (the `group` of its rows)
UNIT_LABELS: dict[str, str] = {
    TOP_ACCOUNTS: f"each account of the top {TOP_SHARE:.0%} by followers, alone",
    RANDOM_ALL: f"random groups of {GROUP_SIZE} accounts",
    RANDOM_TOP_DECILE: f"random groups of {GROUP_SIZE} accounts of the top follower decile",
}
MEDIAN, Q25, Q75, MAXIMUM, SHARE_BELOW_0 = "median", "q25", "q75", "max", "share_below_0"
STATISTICS: tuple[str, ...] = (MEDIAN, Q25, Q75, MAXIMUM, SHARE_BELOW_0)


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


def top_accounts(agents: pd.DataFrame, share: float = TOP_SHARE) -> list[str]:
    """The ⌈share · n⌉ accounts with the most followers at the start, most followed first; ties broken by table
    order as `follower_deciles` breaks them (the later row ranks higher)."""
    if agents.empty:
        return []
    # round first: 0.01 * n must not become n / 100 + 1 through a float's last bit
    count = max(1, math.ceil(round(share * len(agents), 9)))
    ranks = agents["n_followers_at_start"].rank(method="first")
    return agents.loc[ranks.sort_values(ascending=False).index[:count], "agent_id"].tolist()


def random_groups(
    accounts: Sequence[str], pool: str, size: int = GROUP_SIZE, n_groups: int = N_GROUPS, seed: int = GROUP_DRAW_SEED
) -> dict[str, tuple[str, ...]]:
    """`n_groups` groups of `size` accounts of `accounts`, each drawn without replacement by
    `rng_for(seed, "random-groups", pool)` from the sorted accounts (so the draw depends on the pool, never on table
    order, and both arms of a seed get the same groups); none when the pool is smaller than a group."""
    members = sorted(set(accounts))
    if len(members) < size:
        return {}
    rng = rng_for(seed, "random-groups", pool)
    width = len(str(n_groups - 1))
    return {
        f"g{i:0{width}d}": tuple(members[j] for j in rng.choice(len(members), size=size, replace=False))
        for i in range(n_groups)
    }


def unit_sets(agents: pd.DataFrame | None) -> dict[str, dict[str, tuple[str, ...]]]:
    """The distribution groupings' sets of accounts (unit -> accounts): each top-1 % account alone, random groups of
    all accounts and of the top follower decile; none when the agents table has no follower counts."""
    if agents is None or agents.empty or "n_followers_at_start" not in agents.columns:
        return {}
    deciles = follower_deciles(agents)
    top_decile = deciles.index[deciles == deciles.max()].tolist()
    return {
        TOP_ACCOUNTS: {account: (account,) for account in top_accounts(agents)},
        RANDOM_ALL: random_groups(agents["agent_id"].tolist(), RANDOM_ALL),
        RANDOM_TOP_DECILE: random_groups(top_decile, RANDOM_TOP_DECILE),
    }


def set_reach(exposures: pd.DataFrame, sets: Mapping[str, Sequence[str]], population: int | None = None) -> pd.Series:
    """Reach of each set of accounts (Huszár et al. 2022: of a set of tweets T): the share of the population who saw
    at least one post by an account of the set; 0 for a set nobody saw.

    `population`: the number of agents it is a share of, by default the agents `exposures` shows posts to (pass the
    whole run's when `exposures` is a subset, e.g. its in-network impressions); NaN for every set without one.
    """
    labels = list(sets)
    viewers = exposures["agent_id"].nunique() if population is None else population
    if viewers == 0:
        return pd.Series(np.nan, index=labels, dtype=float)
    membership = pd.DataFrame(
        [(label, str(account)) for label, accounts in sets.items() for account in accounts], columns=["unit", "author"]
    )
    # string ids on both sides: a parquet column may come back categorical, the agents' ids as objects
    pairs = pd.DataFrame({"agent": exposures["agent_id"].astype(str).to_numpy(),
                          "author": exposures["author_id"].astype(str).to_numpy()}).drop_duplicates()  # fmt: skip
    seen = pairs.merge(membership, on="author")[["unit", "agent"]].drop_duplicates()
    return seen.groupby("unit").size().reindex(labels, fill_value=0).astype(float) / viewers


def unit_reach(exposures: pd.DataFrame, agents: pd.DataFrame | None) -> pd.DataFrame:
    """(grouping, group, reach) of every unit of the distribution groupings (`unit_sets`): an account, or a group."""
    frames = []
    for grouping, sets in unit_sets(agents).items():
        reach = set_reach(exposures, sets)
        frames.append(pd.DataFrame({"grouping": grouping, "group": reach.index.astype(str), "reach": reach.values}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["grouping", "group", "reach"])


def unit_amplification(reach: pd.Series, reach_control: pd.Series) -> pd.Series:
    """Per unit reach ÷ reach under the control − 1 (Huszár et al.'s individual amplification, for an account alone);
    NaN where the control showed the unit to nobody (no ratio); a unit missing on one side has reach 0 there."""
    x, y = reach.align(reach_control, fill_value=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x / y - 1.0).where(y > 0)


def distribution_statistics(amplification: pd.Series | np.ndarray) -> dict[str, float]:
    """Median, quartiles (linear interpolation), maximum and share below 0 of the units' amplification, NaN units
    left out; all NaN without any unit."""
    values = np.asarray(amplification, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return dict.fromkeys(STATISTICS, math.nan)
    return {
        MEDIAN: float(np.median(values)),
        Q25: float(np.quantile(values, 0.25)),
        Q75: float(np.quantile(values, 0.75)),
        MAXIMUM: float(values.max()),
        SHARE_BELOW_0: float(np.mean(values < 0)),
    }


def saturated(reach: float, reach_control: float) -> bool:
    """Reach at least `SATURATED_REACH` under both arms: a ratio near 0 then says nothing about amplification."""
    return bool(reach >= SATURATED_REACH and reach_control >= SATURATED_REACH)


def load_reach(tables: RunTables, run_ids: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """REACH_COLUMNS for every run whose exposures can be read (group rows and the distribution groupings' units),
    and a warning for those that cannot."""
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
        frames.append(pd.concat([group_reach(exposures, agents), unit_reach(exposures, agents)], ignore_index=True)
                      .assign(run_id=run_id))  # fmt: skip
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
    units: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """AMPLIFICATION_COLUMNS over the seeds both a condition and its control ran: a group row per (condition,
    grouping, group), a distribution row per (condition, distribution grouping, statistic).

    A group a run never showed has reach 0 there. `units`: `unit_amplification_table(reach, tidy, controls)` when
    the caller has it already.
    """
    runs = tidy[["run_id", "condition", "seed"]]
    merged = reach.merge(runs, on="run_id")
    merged = merged.loc[~merged["grouping"].isin(UNIT_GROUPINGS)]
    units = unit_amplification_table(reach, tidy, controls) if units is None else units
    rows = []
    for condition, control in controls.items():
        seeds = shared_seeds(runs, condition, control)
        if not seeds:
            continue
        for (grouping, group), part in merged.groupby(["grouping", "group"], sort=True):
            wide = part.pivot_table(index="seed", columns="condition", values="reach", aggfunc="first")
            wide = wide.reindex(index=seeds, columns=[condition, control]).fillna(0.0)
            x, y = wide[condition].to_numpy(dtype=float), wide[control].to_numpy(dtype=float)
            ci = bootstrap_ratio_ci(x, y, rng_for(bootstrap_seed, "amplification", condition, grouping, str(group)),
                                    n_resamples=n_resamples)  # fmt: skip
            rows.append({"condition": condition, "control": control, "grouping": grouping, "group": group,
                         "statistic": RATIO, "n_seeds": len(seeds), "n_units": math.nan, "reach": float(np.mean(x)),
                         "reach_control": float(np.mean(y)), "amplification": ci.estimate, "ci_low": ci.low,
                         "ci_high": ci.high, "ci_method": ci.method,
                         "saturated": saturated(float(np.mean(x)), float(np.mean(y)))})  # fmt: skip
        mine = units.loc[units["condition"] == condition]
        rows += distribution_rows(mine, condition, control, bootstrap_seed, n_resamples)
    return pd.DataFrame(rows, columns=list(AMPLIFICATION_COLUMNS))


def shared_seeds(runs: pd.DataFrame, condition: str, control: str) -> list[int]:
    """The seeds both `condition` and `control` ran, in order."""
    return sorted(
        set(runs.loc[runs["condition"] == condition, "seed"]) & set(runs.loc[runs["condition"] == control, "seed"])
    )


def unit_amplification_table(reach: pd.DataFrame, tidy: pd.DataFrame, controls: Mapping[str, str]) -> pd.DataFrame:
    """UNIT_COLUMNS: per condition, seed both it and its control ran, and unit of the distribution groupings, the
    unit's reach under each and its amplification (`unit_amplification`)."""
    runs = tidy[["run_id", "condition", "seed"]]
    merged = reach.loc[reach["grouping"].isin(UNIT_GROUPINGS)].merge(runs, on="run_id")
    frames = []
    for condition, control in controls.items():
        for seed in shared_seeds(runs, condition, control):
            part = merged.loc[merged["seed"] == seed]
            for grouping in UNIT_GROUPINGS:
                rows = part.loc[part["grouping"] == grouping]
                x = rows.loc[rows["condition"] == condition].set_index("group")["reach"].astype(float)
                y = rows.loc[rows["condition"] == control].set_index("group")["reach"].astype(float)
                if x.empty and y.empty:
                    continue
                x, y = x.align(y, fill_value=0.0)
                frames.append(pd.DataFrame({
                    "condition": condition, "control": control, "seed": seed, "grouping": grouping,
                    "unit": x.index.astype(str), "reach": x.to_numpy(), "reach_control": y.to_numpy(),
                    "amplification": unit_amplification(x, y).to_numpy(),
                }))  # fmt: skip
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(UNIT_COLUMNS))
    return table.reindex(columns=list(UNIT_COLUMNS))


def distribution_rows(
    units: pd.DataFrame, condition: str, control: str, bootstrap_seed: int, n_resamples: int
) -> list[dict[str, object]]:
    """One row per distribution grouping and statistic: per seed the statistic over the units with a ratio, then
    its mean over seeds with a bootstrap CI over seeds (`bootstrap_mean_ci`); reach: the units' median reach."""
    rows: list[dict[str, object]] = []
    for grouping in UNIT_GROUPINGS:
        part = units.loc[units["grouping"] == grouping]
        if part.empty:
            continue
        per_seed = pd.DataFrame([
            {**distribution_statistics(seed_units["amplification"]), "seed": seed,
             "n_units": int(seed_units["amplification"].notna().sum()),
             "reach": float(seed_units["reach"].median()), "reach_control": float(seed_units["reach_control"].median())}
            for seed, seed_units in part.groupby("seed", sort=True)
        ])  # fmt: skip
        reach, reach_control = float(per_seed["reach"].mean()), float(per_seed["reach_control"].mean())
        for statistic in STATISTICS:
            values = per_seed[statistic].dropna().to_numpy(dtype=float)
            rng = rng_for(bootstrap_seed, "amplification", condition, grouping, statistic)
            ci = bootstrap_mean_ci(values, rng, n_resamples=n_resamples)
            rows.append({"condition": condition, "control": control, "grouping": grouping,
                         "group": UNIT_LABELS[grouping], "statistic": statistic, "n_seeds": int(values.size),
                         "n_units": float(per_seed["n_units"].mean()), "reach": reach,
                         "reach_control": reach_control, "amplification": ci.estimate, "ci_low": ci.low,
                         "ci_high": ci.high, "ci_method": ci.method,
                         "saturated": saturated(reach, reach_control)})  # fmt: skip
    return rows
