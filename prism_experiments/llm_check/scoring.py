"""The fitness figures of a set of answers, each with a 95 % interval and a pass/fail against its threshold.

Pure functions of two tables: `impressions` (one row per probe x shown post: probe_id, position from 1, on_topic,
has_media, engaged) and `answers` (one row per probe: probe_id, answer JSON, echoed, malformed, repaired,
no_action). Ratios get a percentile bootstrap over probes (prompts are the unit that is drawn; Efron & Tibshirani
1993, ch. 13); proportions a Wilson interval (Wilson 1927). Thresholds and their reasons: docs/llm.md, "Fitness".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np
import pandas as pd

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
#: the longest run of characters a reply or post may share with its prompt before it counts as echoed text
ECHO_CHARS = 30
#: feed positions compared for the position curve: the top three against the bottom three of an 8-post feed
TOP, BOTTOM = (1, 2, 3), (6, 7, 8)


@dataclass(frozen=True)
class Figure:
    """One fitness figure: its value, 95 % interval, threshold and verdict."""

    name: str
    value: float
    low: float
    high: float
    threshold: str
    passed: bool
    note: str = ""


def wilson(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (Wilson 1927); (nan, nan) for n = 0."""
    if n <= 0:
        return math.nan, math.nan
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def ratio_of_rates(sums: np.ndarray) -> float:
    """(engaged A / shown A) / (engaged B / shown B) from totals [engaged A, shown A, engaged B, shown B]."""
    engaged_a, shown_a, engaged_b, shown_b = sums
    rate_a = engaged_a / shown_a if shown_a else math.nan
    rate_b = engaged_b / shown_b if shown_b else math.nan
    if rate_b == 0:
        return math.inf if rate_a > 0 else math.nan
    return float(rate_a / rate_b)


def rate_ratio_figure(impressions: pd.DataFrame, in_a: pd.Series, in_b: pd.Series) -> tuple[float, float, float]:
    """The engagement rate of the impressions in group A over group B, and its percentile 95 % interval over
    resamples of whole probes (undefined resamples left out, infinite ones kept; interval by nearest rank)."""
    engaged = impressions["engaged"]
    frame = pd.DataFrame(
        {
            "probe_id": impressions["probe_id"],
            "engaged_a": engaged & in_a,
            "shown_a": in_a,
            "engaged_b": engaged & in_b,
            "shown_b": in_b,
        }
    )
    per_probe = frame.groupby("probe_id", sort=True).sum().to_numpy(dtype=float)
    value = ratio_of_rates(per_probe.sum(axis=0))
    if len(per_probe) == 0:
        return value, math.nan, math.nan
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(per_probe), (BOOTSTRAP_RESAMPLES, len(per_probe)))
    values = np.array([ratio_of_rates(row) for row in per_probe[picks].sum(axis=1)])
    values = values[~np.isnan(values)]
    if not len(values):
        return value, math.nan, math.nan
    low, high = np.percentile(values, [2.5, 97.5], method="nearest")
    return value, float(low), float(high)


def copy_rate(answers: pd.DataFrame, example: str | None) -> Figure:
    """Answers equal to the prompt's worked example, or whose reply or post echoes prompt text: at most 5 %."""
    copied = answers["echoed"] | (answers["answer"] == example if example is not None else False)
    low, high = wilson(float(copied.sum()), len(answers))
    value = float(copied.mean()) if len(answers) else math.nan
    return Figure("example_copy_rate", value, low, high, "<= 0.05", value <= 0.05)


def persona_lift(impressions: pd.DataFrame) -> Figure:
    """Engagement with posts on the persona's topic over engagement with the others: >= 2, interval above 1."""
    value, low, high = rate_ratio_figure(impressions, impressions["on_topic"], ~impressions["on_topic"])
    return Figure("persona_lift", value, low, high, ">= 2, interval above 1", value >= 2 and low > 1)


def position_rates(impressions: pd.DataFrame) -> pd.Series:
    """Engagement rate by feed position (1 = top)."""
    return impressions.groupby("position")["engaged"].mean()


def position_curve(impressions: pd.DataFrame) -> Figure:
    """Top-three over bottom-three engagement: the curve falls (> 1) but not to zero after position 3."""

    value, low, high = rate_ratio_figure(
        impressions, impressions["position"].isin(TOP), impressions["position"].isin(BOTTOM)
    )
    below_top = impressions.loc[impressions["position"] > max(TOP), "engaged"].mean()
    passed = value > 1 and below_top > 0
    note = f"engagement after position {max(TOP)}: {below_top:.3f}"
    return Figure("position_top_over_bottom", value, low, high, "> 1, and > 0 after position 3", passed, note)


def media_effect(impressions: pd.DataFrame) -> Figure:
    """Engagement with posts with media over posts without, on the persona's topic: >= 1 (media do not repel)."""
    on_topic = impressions[impressions["on_topic"]]
    value, low, high = rate_ratio_figure(on_topic, on_topic["has_media"], ~on_topic["has_media"])
    return Figure("media_effect", value, low, high, ">= 1", value >= 1)


def answer_diversity(answers: pd.DataFrame) -> Figure:
    """Distinct answers over answers: at least 0.5."""
    distinct = answers["answer"].nunique()
    value = distinct / len(answers) if len(answers) else math.nan
    low, high = wilson(float(distinct), len(answers))
    top_share = float(answers["answer"].value_counts(normalize=True).iloc[0]) if len(answers) else math.nan
    return Figure("answer_diversity", value, low, high, ">= 0.5", value >= 0.5, f"most common answer: {top_share:.2f}")


def validity(answers: pd.DataFrame) -> Figure:
    """Answers still invalid after the one repair turn (counted as no action): at most 5 %."""
    value = float(answers["no_action"].mean()) if len(answers) else math.nan
    low, high = wilson(float(answers["no_action"].sum()), len(answers))
    note = f"malformed first: {int(answers['malformed'].sum())}, repaired: {int(answers['repaired'].sum())}"
    return Figure("invalid_after_repair", value, low, high, "<= 0.05", value <= 0.05, note)


def fitness_figures(impressions: pd.DataFrame, answers: pd.DataFrame, example: str | None) -> list[Figure]:
    """Every fitness figure of one model and prompt."""
    return [
        copy_rate(answers, example),
        persona_lift(impressions),
        position_curve(impressions),
        media_effect(impressions),
        answer_diversity(answers),
        validity(answers),
    ]


def echoes(text: str | None, prompt: str, chars: int = ECHO_CHARS) -> bool:
    """Whether `text` shares a run of `chars` characters (or most of itself, if shorter) with `prompt`."""
    if not text:
        return False
    needed = min(chars, max(10, int(0.8 * len(text))))
    match = SequenceMatcher(None, text.lower(), prompt.lower(), autojunk=False).find_longest_match()
    return match.size >= needed


def figures_table(figures: list[Figure]) -> pd.DataFrame:
    """The figures as a table (what `prism-llm-check` prints and logs)."""
    return pd.DataFrame([vars(figure) for figure in figures])
