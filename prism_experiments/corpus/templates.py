"""Post and reply text templates in the post formats (REQ-RETRIEVAL-6), filled from a topic vocabulary.

A text is a pure function of (topic, reply?, a fixed-length row of uniform draws),
so the corpus generator can draw every row at once (fast, vectorised) and the
simulation can author one post at a time with `new_post_text`, both from the
same templates. Every call consumes exactly `TEXT_DRAWS` (or `MEDIA_DRAWS`)
numbers from the generator, whatever the outcome, which keeps downstream draws
aligned across conditions (common random numbers).

Template intent is not the label: a post's `format` is always
`classify_tweet_format(text)` (appended hashtags, for example, turn a question
into storytelling, as they would on a real platform).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from prism_experiments.domain import TOPICS, MediaType, TopicVocabulary, topic_vocabulary

#: Share of posts `new_post_text` ends with hashtags unless told otherwise.
DEFAULT_HASHTAG_FRACTION = 0.3
#: Uniform draws one text consumes (see `_slots` for the layout).
TEXT_DRAWS = 16
#: Uniform draws one media description consumes (template, entity).
MEDIA_DRAWS = 2
MEDIA_KINDS: tuple[MediaType, ...] = ("image", "video", "gif")
#: Seed of every text pool (`text_pool`): fixed, so that corpora of every run seed draw from one pool.
TEXT_POOL_SEED = 20261125
#: Pooled texts per topic (and as many replies) by default: 2 x 12 x 400 = 9,600 texts are all a cold 10-seed
#: `ranking_modes` sweep can embed (53,448 unpooled); a 5,000-post corpus still has ~3,500 distinct texts, and
#: a topic's ~350 root posts per corpus ~235 distinct ones (docs/corpus.md "Text pools")
DEFAULT_TEXT_POOL_SIZE = 400

# Slots: {entity} {entity2} (capitalised: {Entity} {Entity2}) {noun} {noun2} {action} {action2} {Action} {Action2}
# {outcome} {people} {People} {n} {pct}. Templates avoid subject-verb agreement
# with slot phrases (modals, past tense) because nouns mix singular and plural.
TWEET_TEMPLATES: dict[str, tuple[str, ...]] = {
    "list": (
        "{n} lessons from a year of {noun}: 1. {Action} 2. {Action2} 3. Keep an eye on {entity}",
        "My playbook for {noun}, in order:\n1. {Action}\n2. {Action2}\n3. Ignore anyone hyping {entity}",
        "Names that matter in {noun} right now: 1. {Entity} 2. {Entity2} 3. {People} chasing {outcome}",
        "How {people} win at {noun}: 1. {Action} 2. {Action2}",
    ),
    "most_people_think_x": (
        "Most people think {noun} will fade by next year. The {people} who {action} know better.",
        "Everyone says {entity} will dominate {noun}. I'm watching {entity2} and {noun2} instead.",
        "Most people think you need {entity} to {action}. You don't. Start with {noun}.",
        "Everyone says to {action}. Nobody talks about {noun} or {noun2}.",
    ),
    "contrarian_take": (
        "Actually, {noun} won't save you, but learning to {action} will. Ask any of the {people}.",
        "Hot take: actually, {entity} is underrated, but only if you {action} and stop worrying about {noun}.",
        "Actually, {people} had it right about {noun} all along, but everyone listened to {entity} instead.",
        "Actually, the hype around {entity} is fair, but {n} years from now {noun} will matter more.",
    ),
    "before_after": (
        "Before: ignoring {noun}. After: learning to {action} and following {entity}.",
        "Me before -> obsessing over {noun}. Me after {n} months of {noun2} -> {outcome}.",
        "Before: {people} who never {action}. After {n} months: {outcome}.",
        "My {noun} routine. Before: guesswork. After: I {action} every week and follow {entity}.",
    ),
    "question": (
        "{People} of the timeline: what is the most underrated thing about {noun} after {n} years?",
        "Is {entity} overrated or are {people} just impatient about {noun}?",
        "Would you rather {action} or {action2} if {outcome} was the goal?",
        "Who else is watching {entity} and {entity2} for news on {noun}?",
        "How many {people} here already {action} to get {outcome}?",
    ),
    "tip": (
        "Tip: {action} -> {outcome} within {n} weeks.",
        "Pro tip: {action} -> {outcome}. Thank me later, {people}.",
        "Tip: if you follow {entity}, {action} -> {outcome}.",
        "{Action} -> {outcome}. Works for {people} every time.",
    ),
    "storytelling": (
        "{n} years ago I knew nothing about {noun}. Then I started to {action}, and {entity} became part of my week.",
        "Spent {n} hours with {people} talking about {noun}. Came home and decided to {action}.",
        "The first time I tried to {action}, it went badly. {n} attempts later I finally got {outcome}.",
        "Yesterday {entity} reminded me why I care about {noun}. Grateful for the {people} who keep showing up.",
        "A friend told me to {action}. I ignored it for {n} weeks."
        " Now {entity} is the first thing I check each morning.",
    ),
}

REPLY_TEMPLATES: dict[str, tuple[str, ...]] = {
    "ask_question": (
        "How did {entity} handle {noun} when {people} pushed back?",
        "Have you tried to {action}? It got me {outcome}.",
        "Do you think {people} will ever stop arguing about {noun} and {noun2}?",
        "What would {entity} say about {noun} after {n} years?",
        "Why does nobody mention {noun} when {people} bring up {entity}?",
    ),
    "share_experience": (
        "I've found that {people} who {action} end up with {outcome}.",
        "In my experience, {noun} got easier once I started to {action} and follow {entity}.",
        "I've noticed the same thing with {entity}. Took me {n} months to {action}.",
        "I've experienced this firsthand with {noun}, so now I {action} and enjoy {outcome}.",
    ),
    "add_data": (
        "Research shows {pct}% of {people} never {action}.",
        "According to {entity}, interest in {noun} grew {pct}% this year.",
        "Data shows {people} who {action} report {outcome}.",
        "A study shows {people} underestimate {noun} by about {pct}%.",
    ),
    "respectful_disagree": (
        "I think {noun} deserves more nuance, but I see your point about {entity}.",
        "Not sure that holds for {entity}, however {noun} does fit your argument about {noun2}.",
        "I'd argue the opposite: {people} who {action} usually get {outcome}, but it depends.",
        "Actually I think {entity} got {noun} wrong, {noun2} is the real story here.",
    ),
    "agree_and_expand": (
        "Exactly this. {Entity} proved it with {noun} and {people} noticed.",
        "Agreed, and {people} should also {action} for {outcome}.",
        "So true. Add {noun} and {noun2} to the list and you get {outcome}.",
        "Fully agree. Once you {action}, {noun} starts to make sense, just ask {entity}.",
        "Great thread. {Entity} and {entity2} are proof that {people} who {action} win long term.",
    ),
}

_TWEET_TEMPLATE_LIST: tuple[str, ...] = tuple(t for group in TWEET_TEMPLATES.values() for t in group)
_REPLY_TEMPLATE_LIST: tuple[str, ...] = tuple(t for group in REPLY_TEMPLATES.values() for t in group)


def _pick(options: tuple[str, ...], u: float) -> str:
    return options[min(int(u * len(options)), len(options) - 1)]


def _pick_other(options: tuple[str, ...], u_first: float, u_second: float) -> str:
    """An option different from `_pick(options, u_first)` (when there are at least two)."""
    if len(options) < 2:
        return options[0]
    first = min(int(u_first * len(options)), len(options) - 1)
    second = min(int(u_second * (len(options) - 1)), len(options) - 2)
    return options[second + 1 if second >= first else second]


def _capitalised(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _slots(vocabulary: TopicVocabulary, draws: Sequence[float]) -> dict[str, str]:
    # Draw layout: 0 template, 1-2 entities, 3-4 nouns, 5-6 actions, 7 outcome,
    # 8 people, 9 n, 10 pct, 11 hashtag yes/no, 12-13 hashtags, 14 one or two tags, 15 spare.
    action = _pick(vocabulary.actions, draws[5])
    action2 = _pick_other(vocabulary.actions, draws[5], draws[6])
    people = _pick(vocabulary.people, draws[8])
    entity = _pick(vocabulary.entities, draws[1])
    entity2 = _pick_other(vocabulary.entities, draws[1], draws[2])
    return {
        "entity": entity,
        "entity2": entity2,
        "Entity": _capitalised(entity),
        "Entity2": _capitalised(entity2),
        "noun": _pick(vocabulary.nouns, draws[3]),
        "noun2": _pick_other(vocabulary.nouns, draws[3], draws[4]),
        "action": action,
        "action2": action2,
        "Action": _capitalised(action),
        "Action2": _capitalised(action2),
        "outcome": _pick(vocabulary.outcomes, draws[7]),
        "people": people,
        "People": _capitalised(people),
        "n": str(2 + int(draws[9] * 11)),
        "pct": str(5 + int(draws[10] * 90)),
    }


def compose_text(
    topic: str,
    draws: Sequence[float],
    reply: bool = False,
    hashtag_fraction: float = DEFAULT_HASHTAG_FRACTION,
    pool_size: int = 0,
) -> str:
    """The text a row of `TEXT_DRAWS` uniforms in [0, 1) selects for `topic`; with `pool_size`, the
    first draw picks one of the topic's `pool_size` pooled texts instead (`text_pool`)."""
    if len(draws) != TEXT_DRAWS:
        raise ValueError(f"draws: must hold exactly {TEXT_DRAWS} numbers, got {len(draws)}")
    if pool_size > 0:
        return text_pool(topic, reply, hashtag_fraction, pool_size)[min(int(draws[0] * pool_size), pool_size - 1)]
    vocabulary = topic_vocabulary(topic)
    templates = _REPLY_TEMPLATE_LIST if reply else _TWEET_TEMPLATE_LIST
    text = _pick(templates, draws[0]).format(**_slots(vocabulary, draws))
    if draws[11] < hashtag_fraction:
        tags = [_pick(vocabulary.hashtags, draws[12])]
        if draws[14] < 0.3:
            tags.append(_pick_other(vocabulary.hashtags, draws[12], draws[13]))
        text = f"{text} {' '.join(tags)}"
    return text


@lru_cache(maxsize=4 * len(TOPICS))
def text_pool(topic: str, reply: bool, hashtag_fraction: float, size: int) -> tuple[str, ...]:
    """`size` texts (or replies) on `topic` from the templates, the same for every run seed.

    Corpora and new posts drawn from pools repeat texts, so the embedding cache holds at most
    2 x topics x `size` vectors however many posts and seeds there are (the huge preset's million posts).
    """
    rng = np.random.default_rng([TEXT_POOL_SEED, TOPICS.index(topic), int(reply)])
    return tuple(compose_text(topic, row, reply, hashtag_fraction) for row in rng.random((size, TEXT_DRAWS)).tolist())


def pooled_texts(topics: Sequence[str], hashtag_fraction: float, size: int) -> list[str]:
    """Every distinct text that pooled corpora on `topics`, and their runs' new posts and replies, can hold:
    the `text_pool`s of each topic, posts then replies, in pool order."""
    pools = (text_pool(topic, reply, hashtag_fraction, size) for topic in topics for reply in (False, True))
    return list(dict.fromkeys(text for pool in pools for text in pool))


def compose_media_description(topic: str, media_type: str, draws: Sequence[float]) -> str:
    """The media description a row of `MEDIA_DRAWS` uniforms selects for `topic` and `media_type`."""
    if len(draws) != MEDIA_DRAWS:
        raise ValueError(f"draws: must hold exactly {MEDIA_DRAWS} numbers, got {len(draws)}")
    vocabulary = topic_vocabulary(topic)
    template = _pick(vocabulary.media_descriptions(media_type), draws[0])
    return template.format(entity=_pick(vocabulary.entities, draws[1]))


def new_post_text(
    topic: str,
    rng: np.random.Generator,
    reply: bool = False,
    hashtag_fraction: float = DEFAULT_HASHTAG_FRACTION,
    pool_size: int = 0,
) -> str:
    """A fresh post (or reply) text on `topic`; consumes exactly TEXT_DRAWS uniforms from `rng`."""
    if not 0.0 <= hashtag_fraction <= 1.0:
        raise ValueError(f"hashtag_fraction: must be in [0, 1], got {hashtag_fraction}")
    return compose_text(topic, rng.random(TEXT_DRAWS).tolist(), reply, hashtag_fraction, pool_size)


def new_media_description(topic: str, media_type: str, rng: np.random.Generator) -> str:
    """A description of an image, video or gif on `topic`; consumes exactly MEDIA_DRAWS uniforms."""
    if media_type not in MEDIA_KINDS:
        raise ValueError(f"media_type: must be one of {', '.join(MEDIA_KINDS)}; got {media_type!r}")
    return compose_media_description(topic, media_type, rng.random(MEDIA_DRAWS).tolist())
