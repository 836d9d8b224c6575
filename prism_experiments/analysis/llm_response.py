"""Do LLM agents respond to media, feed position and topic the way the rule model assumes?

Per impression: engaged = the agent liked, reshared or replied to the post in that step. Rates are
split by who decided (llm / rules, from the run's `tables/agents.parquet`) and by one factor at a time. `python -m
prism_experiments.analysis.llm_response --experiment llm_ranking_modes` prints a Markdown table.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterable

import pandas as pd

from prism_experiments.locations import tracking_uri_for
from prism_experiments.tracking.tags import KIND_TAG, SIMULATION_KIND

POSITION_BANDS = ((0, 2, "1-3"), (3, 5, "4-6"), (6, 10**6, "7+"))


def llm_agent_ids(agents: pd.DataFrame) -> set[str]:
    """The agents of a run (its agents table) that decided by LLM."""
    return set(agents.loc[agents["decider"] == "llm", "agent_id"])


def impressions(exposures: pd.DataFrame, engagements: pd.DataFrame, llm_ids: set[str]) -> pd.DataFrame:
    """One row per impression: decider, has_media, position band, similarity half, engaged."""
    keys = ["step", "agent_id", "post_id"]
    engaged = engagements[keys].drop_duplicates().assign(engaged=True)
    table = exposures.merge(engaged, on=keys, how="left")
    table["engaged"] = table["engaged"].fillna(False).astype(bool)
    table["decider"] = table["agent_id"].map(lambda a: "llm" if a in llm_ids else "rules")
    table["position_band"] = table["position"].map(
        lambda p: next(label for low, high, label in POSITION_BANDS if low <= p <= high)
    )
    median = table["interest_similarity"].median()
    table["similarity_half"] = (table["interest_similarity"] > median).map(
        {True: "above median", False: "below median"}
    )
    table["media"] = table["has_media"].map({True: "with media", False: "no media"})
    return table


def response_table(table: pd.DataFrame) -> pd.DataFrame:
    """Engagement rate and impressions by decider x factor level."""
    rows = []
    for factor in ("media", "position_band", "similarity_half"):
        for (decider, level), group in table.groupby(["decider", factor]):
            rows.append(
                {
                    "factor": factor,
                    "level": level,
                    "decider": decider,
                    "impressions": len(group),
                    "engagement_rate": group["engaged"].mean(),
                }
            )
    wide = pd.DataFrame(rows).pivot_table(
        index=["factor", "level"], columns="decider", values=["engagement_rate", "impressions"]
    )
    wide.columns = [f"{decider} {value}" for value, decider in wide.columns]
    return wide.reset_index()


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table; rates with 3 decimals, counts as integers."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return "" if pd.isna(value) else (f"{value:.0f}" if value.is_integer() and value > 1 else f"{value:.3f}")
        return str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def load_runs(tracking_uri: str, experiment: str) -> Iterable[tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]]:
    """(agents, exposures, engagements) tables of every FINISHED run of the experiment."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise SystemExit(f"llm_response: no experiment {experiment!r} at {tracking_uri}")
    for run in client.search_runs(
        [found.experiment_id], f"attributes.status = 'FINISHED' and tags.`{KIND_TAG}` = '{SIMULATION_KIND}'"
    ):
        with tempfile.TemporaryDirectory() as tmp:
            agents = pd.read_parquet(client.download_artifacts(run.info.run_id, "tables/agents.parquet", tmp))
            exposures = pd.read_parquet(client.download_artifacts(run.info.run_id, "tables/exposures.parquet", tmp))
            engagements = pd.read_parquet(client.download_artifacts(run.info.run_id, "tables/engagements.parquet", tmp))
        yield agents, exposures, engagements


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--tracking-uri", default=None)
    args = parser.parse_args(argv)
    uri = tracking_uri_for(args.tracking_uri)
    tables = [impressions(exp, eng, llm_agent_ids(agents)) for agents, exp, eng in load_runs(uri, args.experiment)]
    if not tables:
        raise SystemExit(f"llm_response: no finished runs in {args.experiment!r}")
    print(markdown(response_table(pd.concat(tables, ignore_index=True))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
