"""How readers respond to political posts: engagement logit terms and stated-preference satisfaction (REQ-POL-6,
REQ-POL-7). Pure functions of arrays; politics/config.py gives each coefficient's source."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prism_experiments.domain import Post
from prism_experiments.politics.config import MAX_TERMS, PoliticsConfig

#: the interest similarity at which an impression is neither wanted nor unwanted (the behaviour model's
#: calibration point, agents/behaviour.py REFERENCE_POINT)
NEUTRAL_SIMILARITY = 0.6


def post_arrays(
    political: np.ndarray, slant: np.ndarray, animosity: np.ndarray, moral: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four post columns cleaned: a missing value (None, NaN) is a non-political post's 0."""
    flag = np.asarray(political, dtype=float)
    flag = np.nan_to_num(flag) > 0
    return (
        flag,
        np.where(flag, np.nan_to_num(np.asarray(slant, dtype=float)), 0.0),
        np.where(flag, np.nan_to_num(np.asarray(animosity, dtype=float)), 0.0),
        np.where(flag, np.nan_to_num(np.asarray(moral, dtype=float)), 0.0),
    )


def alignment(reader_position: np.ndarray, political: np.ndarray, slant: np.ndarray) -> np.ndarray:
    """reader position x post slant in [-1, 1]: positive for pro-attitudinal posts, 0 for a non-political reader or
    post."""
    reader = np.nan_to_num(np.asarray(reader_position, dtype=float))
    return np.where(np.asarray(political, dtype=bool), reader * np.nan_to_num(slant), 0.0)


def same_side(reader_position: np.ndarray, political: np.ndarray, slant: np.ndarray) -> np.ndarray:
    """Political post whose slant is on the (political) reader's side."""
    reader = np.nan_to_num(np.asarray(reader_position, dtype=float))
    return np.asarray(political, dtype=bool) & (reader * np.nan_to_num(slant) > 0)


def engagement_offsets(
    reader_position: np.ndarray,
    political: np.ndarray,
    slant: np.ndarray,
    animosity: np.ndarray,
    moral: np.ndarray,
    config: PoliticsConfig,
) -> np.ndarray:
    """(n, 3) like, reshare and reply logit terms of each impression.

    - alignment_log_odds x alignment on all three (pro-attitudinal content is engaged with more; assumption);
    - reshare: outgroup_log_odds per out-group term for a reader on the author's side (Rathje et al. 2021: +67%
      odds of a share per term; the sharers of an out-group attack are its author's side) and moral_log_odds per
      moral-emotional word (Brady et al. 2017: +20% diffusion per word). Terms = score x MAX_TERMS.
    """
    flag, slant, animosity, moral = post_arrays(political, slant, animosity, moral)
    align = config.alignment_log_odds * alignment(reader_position, flag, slant)
    outgroup = config.outgroup_log_odds * animosity * MAX_TERMS * same_side(reader_position, flag, slant)
    reshare = align + outgroup + config.moral_log_odds * moral * MAX_TERMS
    return np.column_stack([align, reshare, align])


def satisfaction(
    similarity: np.ndarray,
    reader_position: np.ndarray,
    political: np.ndarray,
    slant: np.ndarray,
    animosity: np.ndarray,
    config: PoliticsConfig,
) -> np.ndarray:
    """Stated preference of each impression on Milli et al. 2025's scale (-1 No, 0 Indifferent, +1 Yes): interest
    fit, plus pro-attitudinal alignment, minus the out-group animosity penalty; clipped to [-1, 1].

    It never rewards animosity (Milli et al. 2025: users say they do not want hostile content even while they engage
    with it); moral-emotional words do not enter."""
    flag, slant, animosity, _ = post_arrays(political, slant, animosity, np.zeros(len(np.atleast_1d(political))))
    fit = np.tanh(2.0 * (np.asarray(similarity, dtype=float) - NEUTRAL_SIMILARITY))
    value = (
        fit
        + config.satisfaction_alignment * alignment(reader_position, flag, slant)
        - config.satisfaction_animosity_penalty * animosity
    )
    return np.clip(value, -1.0, 1.0)


def post_columns(posts: Sequence[Post]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """political, slant, animosity, moral_emotion of `posts` as float arrays (NaN where a post has none)."""

    def column(name: str) -> np.ndarray:
        values = [getattr(post, name) for post in posts]
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    return column("political"), column("slant"), column("animosity"), column("moral_emotion")


class PostColumnCache:
    """`post_columns` of a growing post list, read by row: each post's columns are built once (posts are only
    appended and their political attributes never change), so a step's candidates cost one gather, not a
    Python attribute lookup per candidate."""

    def __init__(self) -> None:
        self._columns = np.zeros((4, 0))

    def at(self, posts: Sequence[Post], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """political, slant, animosity, moral_emotion of `posts[rows]`."""
        known = self._columns.shape[1]
        if len(posts) > known:
            self._columns = np.concatenate([self._columns, np.vstack(post_columns(posts[known:]))], axis=1)
        political, slant, animosity, moral = self._columns[:, rows]
        return political, slant, animosity, moral


def impression_columns(
    reader_positions: np.ndarray,
    author_positions: np.ndarray,
    posts: Sequence[Post],
    similarity: np.ndarray,
    config: PoliticsConfig,
) -> dict[str, np.ndarray]:
    """The exposures table's political columns of a step's impressions (REQ-POL-8): the reader's and the author's
    position (NaN: non-political), the post's four attributes and the reader's stated-preference satisfaction."""
    political, slant, animosity, moral = post_columns(posts)
    return {
        "reader_position": np.asarray(reader_positions, dtype=float),
        "author_position": np.asarray(author_positions, dtype=float),
        "post_political": political,
        "post_slant": slant,
        "post_animosity": animosity,
        "post_moral_emotion": moral,
        "satisfaction": satisfaction(similarity, reader_positions, political, slant, animosity, config),
    }
