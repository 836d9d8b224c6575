"""Implicit-feedback matrix factorisation (Hu, Koren & Volinsky 2008) on a run's own engagement log.

Confidence c_ui = 1 + alpha * r_ui, where r_ui counts user u's likes, reshares and replies of post i, and the
preference p_ui = 1 where r_ui > 0 (Hu et al., ICDM 2008, section 4). The `implicit` package's
`AlternatingLeastSquares` takes the user x item matrix of confidences as it is (its docs: "the value is the
confidence that the user liked the item"; unset entries count as p = 0, c = 1), so the matrix holds 1 + alpha * r
and its own `alpha` stays 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.ranking.feedback import FeedbackLog

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


@dataclass(frozen=True)
class Factors:
    """A fit's factors: row u of `users` is `user_ids[u]`'s, row j of `items` is store row `item_rows[j]`'s."""

    user_ids: tuple[str, ...]
    users: np.ndarray
    item_rows: np.ndarray
    items: np.ndarray


def confidence_matrix(
    users: np.ndarray, items: np.ndarray, counts: np.ndarray, n_users: int, n_items: int, alpha: float
) -> csr_matrix:
    """User x item CSR of c = 1 + alpha * r over the pairs with r > 0 (duplicate pairs summed first); Hu et al. 2008."""
    from scipy.sparse import coo_matrix

    counts_matrix = coo_matrix((np.asarray(counts, np.float64), (users, items)), shape=(n_users, n_items)).tocsr()
    counts_matrix.sum_duplicates()
    counts_matrix.eliminate_zeros()
    confidence = counts_matrix.copy()
    confidence.data = 1.0 + alpha * counts_matrix.data
    return confidence.astype(np.float32)


def fit_factors(
    user_ids: Sequence[str],
    users: np.ndarray,
    item_rows: np.ndarray,
    counts: np.ndarray,
    *,
    factors: int,
    regularization: float,
    alpha: float,
    iterations: int,
    rng: np.random.Generator,
) -> Factors | None:
    """ALS factors of the users and posts with at least one positive count; None when there is none.

    `users` index into `user_ids`, `item_rows` are store rows, `counts` the engagements of each logged (user, row).
    Solved exactly (`use_cg=False`: Hu et al.'s least squares, not the conjugate-gradient shortcut) on one thread,
    with the initial factors drawn from `rng`: the same log and stream give the same factors.
    """
    counts = np.asarray(counts, dtype=np.float64)
    positive = counts > 0
    if not positive.any():
        return None
    # imported here: only collaborative runs pay for implicit (and its scipy.sparse) at start-up
    from implicit.cpu.als import AlternatingLeastSquares
    from threadpoolctl import threadpool_limits

    kept_users, user_index = np.unique(np.asarray(users)[positive], return_inverse=True)
    kept_rows, item_index = np.unique(np.asarray(item_rows)[positive], return_inverse=True)
    matrix = confidence_matrix(user_index, item_index, counts[positive], len(kept_users), len(kept_rows), alpha)
    with threadpool_limits(1):  # one BLAS thread: implicit warns otherwise, and a fit must not depend on the core count
        model = AlternatingLeastSquares(
            factors=factors,
            regularization=regularization,
            alpha=1.0,  # the confidences are in the matrix already
            dtype=np.float64,  # float32 Cholesky fails on the near-singular systems of a sparse early log
            use_cg=False,
            iterations=iterations,
            num_threads=1,
            random_state=rng,
        )
        model.fit(matrix, show_progress=False)
    return Factors(
        tuple(user_ids[u] for u in kept_users.tolist()),
        np.asarray(model.user_factors, dtype=np.float64),
        kept_rows.astype(np.int64),
        np.asarray(model.item_factors, dtype=np.float64),
    )


class EngagementLog(FeedbackLog):
    """Every logged (user, store row, engagements) of the impressions a ranker served; users numbered as first seen."""

    def add(self, agent_ids: Sequence[str], rows: np.ndarray, counts: np.ndarray) -> None:
        """One step's impressions with an engagement (`counts` > 0); the others carry no preference (p = 0)."""
        keep = np.flatnonzero(np.asarray(counts) > 0)
        if not len(keep):
            return
        super().add(
            [agent_ids[i] for i in keep.tolist()],
            np.asarray(rows, dtype=np.int64)[keep],
            np.asarray(counts, dtype=np.float64)[keep],
        )
