"""The post-format and reply-archetype heuristics (REQ-RETRIEVAL-6, REQ-RETRIEVAL-7), as pure functions.

Both classifiers check their table's rows top to bottom and return the first
row that matches; the last row is the fallback. Reading of the spec's tables:

* Matching is case-insensitive; curly apostrophes count as straight ones.
* Word triggers match whole words ("but" does not fire on "button" or
  "contribute", "how" does not fire on "however"). The spec's source
  (TuitBot, `winning_dna.rs`) already guards its starts-with words with a
  trailing space; we apply the same idea to every word-like trigger end.
* Starts-with / ends-with checks look at the text stripped of whitespace.
* Commas inside a table cell separate alternatives (as in the reply table's
  "Ends with ?, starts with what/how/..."). So `tip` is
  (starts with "tip:" OR starts with "pro tip:" OR contains "->") AND
  fewer than 200 characters, which is also what the spec's source does.
* The spec files lost their "→" to a broken encoding ("->"); both arrows
  are accepted wherever the table says "->".
* "data/stats/study/research shows" is read as each subject followed by
  "show" or "shows"; "studies show" is accepted as the plural of "study shows".
"""

from __future__ import annotations

import re

from prism_experiments.domain import POST_FORMATS

TWEET_FORMATS: tuple[str, ...] = POST_FORMATS
REPLY_ARCHETYPES: tuple[str, ...] = (
    "ask_question",
    "share_experience",
    "add_data",
    "respectful_disagree",
    "agree_and_expand",
)

#: REQ-RETRIEVAL-6: a tip is short ("< 200 chars"); counted in characters of the stripped text.
TIP_MAX_CHARS = 200

_ARROW = r"(?:->|→)"


def _phrase(phrase: str) -> str:
    """Regex for `phrase` that only matches whole words at its word-like ends."""
    pattern = re.escape(phrase)
    if phrase[0].isalnum():
        pattern = r"(?<![a-z0-9])" + pattern
    if phrase[-1].isalnum():
        pattern += r"(?![a-z0-9])"
    return pattern


class _Trigger:
    """Alternative phrases matched as whole words; a plain substring test first keeps it fast."""

    def __init__(self, *phrases: str, extra: str = "", literals: tuple[str, ...] = ()) -> None:
        self._literals = phrases + literals
        self._regex = re.compile("|".join([_phrase(p) for p in phrases] + ([extra] if extra else [])))

    def found_in(self, lowered: str) -> bool:
        return any(literal in lowered for literal in self._literals) and self._regex.search(lowered) is not None


_LIST_ONE = _Trigger("1.")
_LIST_TWO = _Trigger("2.")
_MOST_PEOPLE = _Trigger("most people think", "everyone says")
_ACTUALLY_COMMA = _Trigger("actually,")
_BUT = _Trigger("but")
_BEFORE_AFTER = _Trigger("before:", "after:", extra=r"(?<![a-z0-9])before\s*" + _ARROW, literals=("before",))
_TIP_START = re.compile(r"(?:pro )?tip:")
_ARROW_ANYWHERE = re.compile(_ARROW)

_QUESTION_START = re.compile(r"(?:what|how|why|have you|do you)(?![a-z0-9])")
_EXPERIENCE = _Trigger("i've found", "i've noticed", "i've experienced", "in my experience")
_DATA = _Trigger(
    "according to",
    "% of",
    extra=r"(?<![a-z0-9])(?:data|stats|study|studies|research)\s+shows?(?![a-z0-9])",
    literals=("show",),
)
_DISAGREE_HEDGE = _Trigger("actually", "however", "but")
_DISAGREE_STANCE = _Trigger("i think", "i'd argue", "not sure")


def _normalise(text: str) -> str:
    return text.strip().lower().replace("’", "'")


def classify_tweet_format(text: str) -> str:
    """One of TWEET_FORMATS by REQ-RETRIEVAL-6's table, first match wins (list, most_people_think_x,
    contrarian_take, before_after, question, tip, storytelling)."""
    lowered = _normalise(text)
    if _LIST_ONE.found_in(lowered) and _LIST_TWO.found_in(lowered):
        return "list"
    if _MOST_PEOPLE.found_in(lowered):
        return "most_people_think_x"
    if _ACTUALLY_COMMA.found_in(lowered) and _BUT.found_in(lowered):
        return "contrarian_take"
    if _BEFORE_AFTER.found_in(lowered):
        return "before_after"
    if lowered.endswith("?"):
        return "question"
    tip_signal = _TIP_START.match(lowered) is not None or _ARROW_ANYWHERE.search(lowered) is not None
    if tip_signal and len(lowered) < TIP_MAX_CHARS:
        return "tip"
    return "storytelling"


def classify_reply_archetype(text: str) -> str:
    """One of REPLY_ARCHETYPES by REQ-RETRIEVAL-7's table, first match wins (ask_question,
    share_experience, add_data, respectful_disagree, agree_and_expand)."""
    lowered = _normalise(text)
    if lowered.endswith("?") or _QUESTION_START.match(lowered):
        return "ask_question"
    if _EXPERIENCE.found_in(lowered):
        return "share_experience"
    if _DATA.found_in(lowered):
        return "add_data"
    if _DISAGREE_HEDGE.found_in(lowered) and _DISAGREE_STANCE.found_in(lowered):
        return "respectful_disagree"
    return "agree_and_expand"
