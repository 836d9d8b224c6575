"""Posts with a political flag, slant, out-group animosity and moral-emotional intensity, and texts that carry them
(REQ-POL-4, REQ-POL-5).

A post's attributes are drawn from keyed uniforms of (seed, post id) on their own stream (`Stream.POLITICS`), so a
post is the same under every ranker and no other stream moves when politics is switched on. The text gains one
sentence naming the in-group or the out-group in the words Rathje, Van Bavel & van der Linden 2021 (PNAS
118:e2024292118) count (party and ideology names: "Democrats", "liberals", "Republicans", "conservatives", ...),
and moral-emotional words of the kind Brady et al. 2017 (PNAS 114:7313) count ("shameful", "evil", "disgusting",
...), so that the embeddings and an LLM decider see what the numbers say.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtri

from prism_experiments.corpus.appeal import post_keys
from prism_experiments.domain import Post
from prism_experiments.politics.config import MAX_TERMS, PoliticsConfig
from prism_experiments.random_streams import Stream, keyed_uniforms

#: words naming each side (Rathje et al. 2021's dictionaries are party, politician and ideology names)
SIDE_TERMS: dict[int, tuple[str, ...]] = {
    -1: ("Democrats", "liberals", "progressives", "the left", "Biden voters"),
    1: ("Republicans", "conservatives", "the GOP", "the right", "Trump voters"),
}
#: out-group phrases; {o} is an out-group term
OUTGROUP_PHRASES: tuple[str, ...] = (
    "{o} keep lying about this",
    "nobody should trust {o}",
    "{o} are wrecking everything",
)
#: in-group phrases; {i} is an in-group term
INGROUP_PHRASES: tuple[str, ...] = (
    "proud of {i} for standing up on this",
    "{i} finally got this right",
    "this is why {i} have to show up",
)
#: moral-emotional words (Brady et al. 2017 count words both moral and emotional)
MORAL_WORDS: tuple[str, ...] = ("shameful", "evil", "disgusting", "outrageous", "hateful", "a betrayal")
#: keyed draws per post: political, slant noise, out-group count, moral count, then word choices
_POLITICAL, _SLANT, _OUTGROUP, _MORAL, _WORDS = range(5)
_DRAWS = _WORDS + 2 * MAX_TERMS + 2
#: half a step of keyed_uniforms' 2**-53 grid: the normal of a uniform stays finite
_HALF_STEP = 2.0**-54


def post_draws(seed: int, post_ids: Sequence[str]) -> np.ndarray:
    """(len(post_ids), _DRAWS) uniforms fixed by (seed, post id) on the politics stream."""
    if not post_ids:
        return np.zeros((0, _DRAWS))
    return keyed_uniforms(seed, Stream.POLITICS, 0, post_keys(post_ids), np.arange(_DRAWS, dtype=np.uint64))


def capped_poisson(uniforms: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """min(Poisson(rate) inverse CDF at u, MAX_TERMS): the number of k < MAX_TERMS whose CDF is below u (written out,
    not scipy.stats: a run's start-up does not import it)."""
    rates = np.asarray(rates, dtype=float)
    term = np.exp(-rates)
    cdf = term.copy()
    count = np.zeros(len(rates), dtype=np.int64)
    for k in range(MAX_TERMS):
        count += uniforms > cdf
        term = term * rates / (k + 1)
        cdf = cdf + term
    return count


def political_probability(config: PoliticsConfig) -> float:
    """P(a political author's post is political): the political share of all posts over the political agents'
    share (every political post has a political author), at most 1."""
    share = config.political_agent_share
    return min(1.0, config.political_post_share / share) if share > 0 else 0.0


def draw_attributes(
    draws: np.ndarray, author_positions: np.ndarray, config: PoliticsConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per post: political flag, slant (NaN when not political), out-group terms and moral-emotional words (0 when
    not political), from its uniforms and its author's position (NaN: a non-political author)."""
    positions = np.asarray(author_positions, dtype=float)
    partisan = ~np.isnan(positions)
    political = partisan & (draws[:, _POLITICAL] < political_probability(config))
    strength = np.abs(np.nan_to_num(positions))
    noise = config.slant_noise_sd * ndtri(draws[:, _SLANT] + _HALF_STEP)
    slant = np.where(political, np.clip(np.nan_to_num(positions) + noise, -1.0, 1.0), np.nan)
    outgroup = np.where(political, capped_poisson(draws[:, _OUTGROUP], config.outgroup_rate * strength), 0)
    moral = np.where(political, capped_poisson(draws[:, _MORAL], np.full(len(positions), config.moral_rate)), 0)
    return political, slant, outgroup, moral


def _pick(options: Sequence[str], u: float) -> str:
    return options[min(int(u * len(options)), len(options) - 1)]


def political_sentence(side: int, outgroup: int, moral: int, words: Sequence[float]) -> str:
    """The sentence a political post of `side` (-1, +1) gains: `outgroup` out-group phrases (an in-group phrase when
    0) and `moral` moral-emotional words."""
    if outgroup == 0:
        phrases = [_pick(INGROUP_PHRASES, words[0]).format(i=_pick(SIDE_TERMS[side], words[1]))]
    else:
        phrases = [
            OUTGROUP_PHRASES[k % len(OUTGROUP_PHRASES)].format(o=_pick(SIDE_TERMS[-side], words[1 + k]))
            for k in range(outgroup)
        ]
    sentence = "; ".join(phrases)
    sentence = sentence[0].upper() + sentence[1:] + "."
    if moral:
        chosen = [
            MORAL_WORDS[(int(words[MAX_TERMS + 1] * len(MORAL_WORDS)) + k) % len(MORAL_WORDS)] for k in range(moral)
        ]
        sentence += " It is " + " and ".join(chosen) + "."
    return sentence


def politicized(
    posts: Sequence[Post], author_positions: Sequence[float], seed: int, config: PoliticsConfig
) -> list[Post]:
    """`posts` with their political attributes and, for the political ones, the sentence that carries them appended
    to the text; a post that already has `political` set (a loaded corpus's column) is kept as it is."""
    draws = post_draws(seed, [post.id for post in posts])
    political, slant, outgroup, moral = draw_attributes(draws, np.asarray(author_positions, dtype=float), config)
    out = []
    for i, post in enumerate(posts):
        if post.political is not None:
            out.append(post)
            continue
        update: dict[str, object] = {"political": bool(political[i])}
        if political[i]:
            side = 1 if slant[i] >= 0 else -1
            words = draws[i, _WORDS:].tolist()
            update |= {
                "slant": float(slant[i]),
                "animosity": float(outgroup[i]) / MAX_TERMS,
                "moral_emotion": float(moral[i]) / MAX_TERMS,
                "text": f"{post.text} {political_sentence(side, int(outgroup[i]), int(moral[i]), words)}",
            }
        else:
            update |= {"slant": None, "animosity": 0.0, "moral_emotion": 0.0}
        out.append(post.model_copy(update=update))
    return out
