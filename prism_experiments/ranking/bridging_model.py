"""The bridging score of X's Community Notes: a one-factor matrix factorisation whose item intercept is the approval
left after the factor has explained the approval that splits along one axis (REQ-POL-11).

Source text (twitter/communitynotes, documentation/under-the-hood/ranking-notes.md, snapshot 273c8958): "We predict
each rating as: r̂_un = μ + i_u + i_n + f_u · f_n", minimising "Σ (r_un − r̂_un)² + λ_i (i_u² + i_n² + μ²) +
λ_f (||f_u||² + ||f_n||²) Where λ_i=0.15, the regularization on the intercept terms, is currently 5 times higher
than λ_f=0.03"; a note needs "at least 5 total ratings"; "Helpful" at intercept 0.40 with "abs(f_n) < 0.50".
The sums are the docs formula's (the production code averages each penalty over its parameters).

Here a rating is an impression: 1 when the reader liked, reshared or replied, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Community Notes' regularisation of the intercepts (ranking-notes.md: λ_i = 0.15)
INTERCEPT_LAMBDA = 0.15
#: Community Notes' regularisation of the factors (ranking-notes.md: λ_f = 0.03)
FACTOR_LAMBDA = 0.03
#: ratings a note needs before it is scored (ranking-notes.md: "at least 5 total ratings")
MIN_RATINGS = 5


@dataclass(frozen=True)
class BridgingFit:
    """μ, and per user and per item (store row, `item_rows`) the intercept and the one factor."""

    mu: float
    user_intercepts: np.ndarray
    user_factors: np.ndarray
    item_rows: np.ndarray
    item_intercepts: np.ndarray
    item_factors: np.ndarray
    item_ratings: np.ndarray


def fit_bridging(
    users: np.ndarray,
    items: np.ndarray,
    ratings: np.ndarray,
    rng: np.random.Generator,
    *,
    intercept_lambda: float = INTERCEPT_LAMBDA,
    factor_lambda: float = FACTOR_LAMBDA,
    iterations: int = 30,
) -> BridgingFit | None:
    """Alternating least squares of Community Notes' loss on (user code, store row, rating) triples; each update is
    the exact minimiser of the loss in one block of parameters given the others. None without ratings."""
    if len(ratings) == 0:
        return None
    item_rows, item = np.unique(items, return_inverse=True)
    n_users, n_items = int(users.max()) + 1, len(item_rows)
    r = np.asarray(ratings, dtype=float)
    user_count = np.bincount(users, minlength=n_users).astype(float)
    item_count = np.bincount(item, minlength=n_items).astype(float)
    i_u, i_n = np.zeros(n_users), np.zeros(n_items)
    f_u, f_n = rng.normal(0.0, 0.1, n_users), rng.normal(0.0, 0.1, n_items)
    mu = 0.0
    for _ in range(iterations):
        product = f_u[users] * f_n[item]
        mu = float((r - i_u[users] - i_n[item] - product).sum() / (len(r) + intercept_lambda))
        i_u = np.bincount(users, r - mu - i_n[item] - product, n_users) / (user_count + intercept_lambda)
        i_n = np.bincount(item, r - mu - i_u[users] - product, n_items) / (item_count + intercept_lambda)
        rest = r - mu - i_u[users] - i_n[item]
        f_u = np.bincount(users, rest * f_n[item], n_users) / (
            np.bincount(users, f_n[item] ** 2, n_users) + factor_lambda
        )
        f_n = np.bincount(item, rest * f_u[users], n_items) / (
            np.bincount(item, f_u[users] ** 2, n_items) + factor_lambda
        )
    return BridgingFit(mu, i_u, f_u, item_rows, i_n, f_n, item_count.astype(np.int64))
