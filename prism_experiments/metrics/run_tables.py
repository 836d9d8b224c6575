"""A run's event-log tables as the metrics read them, with the intermediate tables several metrics share."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from prism_experiments.domain import EVENT_TABLES
from prism_experiments.metrics._tables import as_int, event_table, require_columns
from prism_experiments.metrics.cascades import cascade_table
from prism_experiments.metrics.engagement import split_engagement_rates
from prism_experiments.metrics.feeds import DEFAULT_MAX_FEEDS_FOR_JACCARD, feed_entropies
from prism_experiments.metrics.moments import shown_original_cascade_sizes


def new_post_mask(posts: pd.DataFrame) -> pd.Series:
    """Posts authored during the run (created_step >= 0) that are originals, not replies."""
    require_columns(posts, "posts", ["created_step", "parent_id"])
    return (as_int(posts["created_step"]) >= 0) & posts["parent_id"].isna()


def action_counts(engagements: pd.DataFrame) -> dict[str, int]:
    """Number of like, reshare and reply actions."""
    require_columns(engagements, "engagements", ["action"])
    counts = engagements["action"].value_counts()
    return {action: int(counts.get(action, 0)) for action in ("like", "reshare", "reply")}


@dataclass(frozen=True)
class RunTables:
    """The five event-log tables of a run; what several metrics derive from them is computed once, when first read."""

    posts: pd.DataFrame
    exposures: pd.DataFrame
    engagements: pd.DataFrame
    follows: pd.DataFrame
    cascade_edges: pd.DataFrame
    #: feeds per step the Jaccard overlap samples down to (docs/metrics.md, "feed_jaccard_mean")
    max_feeds_for_jaccard: int = DEFAULT_MAX_FEEDS_FOR_JACCARD
    #: every agent of the run, those who did nothing included; None for an event log read without its population
    agent_ids: tuple[str, ...] | None = None

    @classmethod
    def of(cls, result: object, max_feeds_for_jaccard: int = DEFAULT_MAX_FEEDS_FOR_JACCARD) -> RunTables:
        """The tables of `result`, an EventLog or any object with the five event-log DataFrames as attributes (and
        the run's `agents`, when it has them); `result` itself when it is a RunTables of the same sampling, so what
        the summary and the step series share is computed once."""
        if isinstance(result, RunTables) and result.max_feeds_for_jaccard == max_feeds_for_jaccard:
            return result
        tables = {name: event_table(result, name) for name in EVENT_TABLES}
        agents = getattr(result, "agents", None)
        agent_ids = tuple(agent.id for agent in agents) if agents else None
        return cls(**tables, max_feeds_for_jaccard=max_feeds_for_jaccard, agent_ids=agent_ids)

    @property
    def n_impressions(self) -> int:
        """Rows of exposures."""
        return len(self.exposures)

    @cached_property
    def cascades(self) -> pd.DataFrame:
        """One row per cascade (`cascade_table`)."""
        return cascade_table(self.cascade_edges)

    @cached_property
    def shown_original_sizes(self) -> np.ndarray:
        """The cascade size of each original post shown at least once (`shown_original_cascade_sizes`)."""
        return shown_original_cascade_sizes(self.posts, self.exposures, self.cascades)

    @cached_property
    def accounts(self) -> tuple[str, ...]:
        """The run's agents; without them, every account the event log names (authors, viewers, engagers)."""
        if self.agent_ids is not None:
            return self.agent_ids
        named = [self.posts["author_id"], self.exposures["agent_id"], self.engagements["agent_id"]]
        return tuple(sorted(set(pd.concat(named, ignore_index=True).dropna().astype(str))))

    @cached_property
    def _feed_entropies(self) -> dict[str, pd.Series]:
        return {}

    def feed_entropies(self, label: str) -> pd.Series:
        """`feed_entropies(exposures, label)`, computed once per label (the summary's mean, the step series' means)."""
        if label not in self._feed_entropies:
            self._feed_entropies[label] = feed_entropies(self.exposures, label)
        return self._feed_entropies[label]

    @cached_property
    def actions(self) -> dict[str, int]:
        """Number of like, reshare and reply actions."""
        return action_counts(self.engagements)

    @cached_property
    def network_engagement_rates(self) -> tuple[float, float]:
        """(in-network, out-of-network) engagements per impression."""
        return split_engagement_rates(self.exposures, self.engagements, "in_network")
