"""What a run's political exposure and engagement were (REQ-POL-10): pure functions over the event-log tables'
political columns (`politics.behaviour.impression_columns`; the posts table's `author_position`, `animosity`...).

Each answers None for a run without politics (the columns are absent), so the metrics built on them stay out of a
non-political run's summary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prism_experiments.politics.identity import sides

#: the exposure classes of Nyhan et al. 2023 (Nature 620:137): a source on the reader's side, on the other side,
#: or neither (a non-political source)
EXPOSURE_CLASSES: tuple[str, ...] = ("like_minded", "cross_cutting", "neutral")


def exposure_class(reader_position: np.ndarray, author_position: np.ndarray) -> np.ndarray:
    """Per impression of a political reader: like_minded (author on the reader's side), cross_cutting (the other
    side) or neutral (a non-political author); "" for a non-political reader (not counted)."""
    reader, author = sides(reader_position), sides(author_position)
    return np.where(
        reader == 0, "", np.where(author == 0, "neutral", np.where(author == reader, "like_minded", "cross_cutting"))
    )


def class_shares(classes: np.ndarray) -> dict[str, float] | None:
    """Share of each exposure class among the counted entries; None when none is counted."""
    counted = classes[classes != ""]
    if len(counted) == 0:
        return None
    return {name: float(np.mean(counted == name)) for name in EXPOSURE_CLASSES}


def has_politics(exposures: pd.DataFrame) -> bool:
    return "reader_position" in exposures.columns


def impression_class_shares(exposures: pd.DataFrame) -> dict[str, float] | None:
    """Like-minded, cross-cutting and neutral shares of political readers' impressions (Nyhan et al. 2023)."""
    if not has_politics(exposures):
        return None
    return class_shares(
        exposure_class(exposures["reader_position"].to_numpy(), exposures["author_position"].to_numpy())
    )


def engagement_positions(exposures: pd.DataFrame, engagements: pd.DataFrame, posts: pd.DataFrame) -> pd.DataFrame:
    """The engagements with the engager's position (`reader_position`) and the post's `author_position`."""
    readers = exposures.drop_duplicates("agent_id").set_index("agent_id")["reader_position"]
    authors = posts.set_index("post_id")["author_position"]
    return pd.DataFrame(
        {
            "action": engagements["action"].to_numpy(),
            "reader_position": engagements["agent_id"].map(readers).to_numpy(dtype=float),
            "author_position": engagements["post_id"].map(authors).to_numpy(dtype=float),
        }
    )


def engagement_class_shares(
    exposures: pd.DataFrame, engagements: pd.DataFrame, posts: pd.DataFrame
) -> dict[str, float] | None:
    """Like-minded, cross-cutting and neutral shares of political readers' engagements (likes, reshares, replies)."""
    if not has_politics(exposures) or "author_position" not in posts.columns or engagements.empty:
        return None
    joined = engagement_positions(exposures, engagements, posts)
    return class_shares(exposure_class(joined["reader_position"].to_numpy(), joined["author_position"].to_numpy()))


def hostile(animosity: pd.Series) -> np.ndarray:
    """Posts with at least one out-group term (animosity > 0; a missing value is a non-political post's 0)."""
    return np.nan_to_num(animosity.to_numpy(dtype=float)) > 0


def animosity_shares(exposures: pd.DataFrame, posts: pd.DataFrame) -> tuple[float, float] | None:
    """(share of impressions showing an out-group hostile post, share of hostile posts among the run's posts): the
    amplification of animosity is the first over the second (Milli et al. 2025 compare timelines; here the supply
    is every post the run had)."""
    if not has_politics(exposures) or "animosity" not in posts.columns or exposures.empty or posts.empty:
        return None
    return float(hostile(exposures["post_animosity"]).mean()), float(hostile(posts["animosity"]).mean())


def political_share(exposures: pd.DataFrame) -> float | None:
    """Share of impressions showing a political post."""
    if not has_politics(exposures) or exposures.empty:
        return None
    return float((np.nan_to_num(exposures["post_political"].to_numpy(dtype=float)) > 0).mean())


def satisfaction_per_impression(exposures: pd.DataFrame) -> float | None:
    """Mean stated-preference satisfaction of the impressions (Milli et al. 2025's -1/0/+1 scale)."""
    if not has_politics(exposures) or exposures.empty:
        return None
    return float(exposures["satisfaction"].mean())


def side_reach(exposures: pd.DataFrame, posts: pd.DataFrame, side: int) -> float | None:
    """Impressions per post of the side's authors' posts (-1 left, +1 right): the reach that Huszár et al. 2022
    (PNAS 119:e2025334119) compare between a ranked and a chronological timeline (`huszar_amplification`)."""
    if not has_politics(exposures) or "author_position" not in posts.columns:
        return None
    authored = int((sides(posts["author_position"].to_numpy(dtype=float)) == side).sum())
    if authored == 0:
        return None
    shown = int((sides(exposures["author_position"].to_numpy(dtype=float)) == side).sum())
    return shown / authored


def huszar_amplification(treated_reach: float, control_reach: float) -> float:
    """Huszár et al. 2022's amplification, as a ratio: reach on ranked timelines over reach on chronological ones,
    minus 1 ("A value of 0% indicates that tweets by the group reach the same number of users on ranked timelines
    as they do on chronological timelines. A value of 100% means double the reach", Fig. 1's caption)."""
    return treated_reach / control_reach - 1.0 if control_reach > 0 else float("nan")


def author_reach(exposures: pd.DataFrame, posts: pd.DataFrame) -> pd.DataFrame:
    """Per political author: side, posts and impressions per post (Huszár et al. 2022's individual amplification is
    the ratio of one author's reach in two arms)."""
    political = posts[~np.isnan(posts["author_position"].to_numpy(dtype=float))]
    counts = political.groupby("author_id").agg(position=("author_position", "first"), posts=("post_id", "size"))
    shown = exposures.groupby("author_id").size().rename("impressions")
    table = counts.join(shown, how="left").fillna({"impressions": 0})
    table["side"] = sides(table["position"].to_numpy())
    table["reach"] = table["impressions"] / table["posts"]
    return table.reset_index()


def reshare_assortativity(exposures: pd.DataFrame, engagements: pd.DataFrame, posts: pd.DataFrame) -> float | None:
    """Pearson correlation of the resharer's and the author's positions over the reshare edges between political
    agents: the scalar assortativity coefficient of Newman 2003 (Phys. Rev. E 67:026126) on the reshare network."""
    if not has_politics(exposures) or "author_position" not in posts.columns or engagements.empty:
        return None
    joined = engagement_positions(exposures, engagements[engagements["action"] == "reshare"], posts)
    both = joined.dropna(subset=["reader_position", "author_position"])
    if len(both) < 3 or both["reader_position"].std() == 0 or both["author_position"].std() == 0:
        return float("nan")
    return float(np.corrcoef(both["reader_position"], both["author_position"])[0, 1])
