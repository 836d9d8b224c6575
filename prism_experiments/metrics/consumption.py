"""What users consume: the overlap of the sets of posts pairs of users engaged with (homogeneity of behaviour)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import require_columns
from prism_experiments.metrics.feeds import mean_pairwise_jaccard

NAN = float("nan")
#: the columns of a pairing table (`most_similar_pairs`)
PAIR_COLUMNS: tuple[str, ...] = ("agent_id", "paired_agent_id", "cosine")


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


def most_similar_pairs(user_ids: Sequence[str], factors: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """Each user paired with the other user whose factor vector has the highest cosine similarity to its own, ties
    broken by a uniform draw from `rng`; columns `PAIR_COLUMNS`, one row per user (none with fewer than two).

    The pairing of T-RECS's replication of Chaney, Stewart & Engelhardt (RecSys 2018), sunnymatt/t-recs-experiments
    `algo_confounding/chaney_utils.py`, `SimilarUserInteractionSimilarity`: the recommender's own estimated user
    representation, cosine similarity, arg-max with random ties. A zero vector has similarity 0 to every user (as
    scikit-learn's `cosine_similarity`); a user is never its own pair. Each similarity is one row's products
    summed on their own, so equal vectors give exactly equal similarities and the tie rule applies to them.
    """
    ids = list(user_ids)
    vectors = np.asarray(factors, dtype=np.float64).reshape(len(ids), -1)
    if len(ids) < 2:
        return pd.DataFrame(
            {name: pd.Series(dtype=kind) for name, kind in zip(PAIR_COLUMNS, ("object", "object", "float64"))}
        )
    norms = np.sqrt((vectors * vectors).sum(axis=1))
    unit = np.divide(vectors, norms[:, None], out=np.zeros_like(vectors), where=norms[:, None] > 0)
    partner = np.zeros(len(ids), dtype=np.int64)
    cosine = np.zeros(len(ids))
    chunk = max(1, 2_000_000 // max(vectors.size, 1))  # rows of about 16 MB of products at a time
    for start in range(0, len(ids), chunk):
        block = (unit[start : start + chunk, None, :] * unit[None, :, :]).sum(axis=2)
        for offset, row in enumerate(block):
            user = start + offset
            row[user] = -np.inf
            best = np.flatnonzero(row == row.max())
            partner[user] = best[0] if len(best) == 1 else best[int(rng.integers(len(best)))]
            cosine[user] = row[partner[user]]
    return pd.DataFrame({"agent_id": ids, "paired_agent_id": [ids[p] for p in partner.tolist()], "cosine": cosine})


def pair_jaccards(pairs: pd.DataFrame, engagements: pd.DataFrame) -> np.ndarray:
    """Per pair (`agent_id`, `paired_agent_id`), the Jaccard index |A ∩ B| / |A ∪ B| of the sets of posts the two
    engaged with (Chaney et al. 2018's measure of homogeneity); NaN where neither engaged with anything."""
    require_columns(pairs, "pairs", ["agent_id", "paired_agent_id"])
    require_columns(engagements, "engagements", ["agent_id", "post_id"])
    consumed = engagements.groupby("agent_id")["post_id"].agg(frozenset).to_dict()
    out = np.full(len(pairs), NAN)
    none: frozenset[str] = frozenset()
    for i, (a, b) in enumerate(zip(pairs["agent_id"].tolist(), pairs["paired_agent_id"].tolist())):
        first, second = consumed.get(a, none), consumed.get(b, none)
        union = len(first | second)
        if union:
            out[i] = len(first & second) / union
    return out


def paired_jaccard_means(
    pairs: pd.DataFrame, recommender: pd.DataFrame, ideal: pd.DataFrame
) -> tuple[float, float, int]:
    """Mean Jaccard index of the same pairs of users under the recommender and under the ideal recommender, over
    the pairs defined in both (`pair_jaccards`), and how many; their difference is Chaney et al.'s "change in Jaccard
    index" (T-RECS's `SimilarUserInteractionSimilarity`: this recommender's minus the ideal's, same pairs)."""
    under_recommender, under_ideal = pair_jaccards(pairs, recommender), pair_jaccards(pairs, ideal)
    both = np.isfinite(under_recommender) & np.isfinite(under_ideal)
    if not both.any():
        return NAN, NAN, 0
    return float(under_recommender[both].mean()), float(under_ideal[both].mean()), int(both.sum())
