"""What users consume: the overlap of the sets of posts pairs of users engaged with (homogeneity of behaviour)."""

from __future__ import annotations

import pandas as pd

from prism_experiments.metrics._tables import require_columns
from prism_experiments.metrics.feeds import mean_pairwise_jaccard

NAN = float("nan")


def consumption_jaccard_mean(engagements: pd.DataFrame) -> float:
    """Mean Jaccard index |A ∩ B| / |A ∪ B| of the sets of posts two users engaged with, over all pairs of users
    who engaged with anything; NaN with fewer than two such users.

    Chaney, Stewart & Engelhardt (RecSys 2018) measure the homogenisation of user behaviour as the Jaccard index
    of the items pairs of users consume; here an engagement (like, reshare, reply) is a consumption. Users who
    consumed nothing are left out: the index of two empty sets is undefined.
    """
    require_columns(engagements, "engagements", ["agent_id", "post_id"])
    pairs = engagements[["agent_id", "post_id"]].drop_duplicates()
    users, posts = pd.factorize(pairs["agent_id"])[0], pd.factorize(pairs["post_id"])[0]
    if users.size == 0 or users.max() < 1:
        return NAN
    return mean_pairwise_jaccard(users, posts)


def engagements_per_impression(exposures: pd.DataFrame, engagements: pd.DataFrame) -> float:
    """Engagements per impression (the run summary's `engagement_rate`); NaN with no impression."""
    return len(engagements) / len(exposures) if len(exposures) else NAN
