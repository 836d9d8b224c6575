"""The prompt an LLM agent reads: its persona and the answer's form in the system message, its rendered feed
(REQ-FEED-6) in the user message.

The feed is `format_feed_for_prompt` with the media indicators, engagement line and the 2,000-character
cap; only the posts that fit are numbered, so the answer may name only those. Two styles: `schema` (the default)
describes the answer in words only, since constrained decoding already fixes its shape; `example` is the earlier
prompt with one worked example, which small models copy (docs/llm.md, "Fitness"), kept to measure against.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from prism_experiments.agents import ARCHETYPES, SocialAgent
from prism_experiments.domain import Post
from prism_experiments.feed_store import format_feed_for_prompt

#: what each archetype looks for in a post, in the reader's own words
ARCHETYPE_WORDS: dict[str, str] = {
    "analyst": "posts with structure, lists and arguments",
    "storyteller": "personal stories and before/after transformations",
    "skeptic": "posts that challenge what most people think",
    "enthusiast": "questions, conversation and personal stories",
    "pragmatist": "practical tips you can act on",
}
#: the `example` style's worked example; small models copy it (docs/llm.md, "Fitness")
EXAMPLE = {
    "like": [2],
    "reshare": [],
    "follow": [],
    "reply": {"to": 2, "text": "Great point, thanks for sharing!"},
    "post": None,
}
SYSTEM = (
    "You are a person scrolling a social media feed. You read the numbered posts and decide what to do. "
    "Answer only with a JSON object: like, reshare, follow = lists of post numbers; reply = "
    '{"to": number, "text": "..."} or null; post = the text of a new post of your own, or null.'
)
#: the `schema` style's rules, before the persona in the system message: the answer's form in words, no example
RULES = (
    "You are scrolling your social media feed. Read the numbered posts and decide what to do with each, as the "
    "person described below would. Most posts get no reaction: act only on posts you care about. Answer with a "
    "JSON object. Its keys like, reshare and follow each hold a list of post numbers, often empty. Its key reply "
    "holds null, or the number of one post and a short reply in your own words. Its key post holds null, or a "
    "short new post of your own."
)
PROMPT_STYLES = ("schema", "example")


@dataclass(frozen=True)
class AgentPrompt:
    """The chat messages of one agent-step and how many feed posts it shows (numbered 1..n_posts)."""

    messages: tuple[dict[str, str], ...]
    n_posts: int


def persona(agent: SocialAgent) -> str:
    """The agent in words: interests, archetype leanings, how active and how engaged it is."""
    leanings = [a for a in ARCHETYPES if agent.archetype_weights[a] >= 0.3] or [
        max(ARCHETYPES, key=lambda a: agent.archetype_weights[a])
    ]
    likes = " and ".join(ARCHETYPE_WORDS[a] for a in leanings)
    activity = (
        "very often"
        if agent.activity >= 0.5
        else "often"
        if agent.activity >= 0.2
        else "now and then"
        if agent.activity >= 0.05
        else "rarely"
    )
    engaged = sum((agent.like_bias, agent.reshare_bias, agent.reply_bias)) / 3
    style = (
        "you like, share and reply readily"
        if engaged > 0.3
        else "you mostly read and seldom react"
        if engaged < -0.3
        else "you react to what really interests you"
    )
    writes = "you write posts often" if agent.post_rate >= 0.3 else "you rarely write posts of your own"
    return (
        f"You are @{agent.id}. You are interested in {', '.join(agent.interests)}. You enjoy {likes}. "
        f"You check your feed {activity}; {style}; {writes}."
    )


def shown_posts(posts: Sequence[Post], now: datetime, max_chars: int | None) -> tuple[str, int]:
    """The rendered feed and the number of posts it holds (whole posts under the cap)."""
    rendered = format_feed_for_prompt(posts, now, max_chars=max_chars)
    count = 0
    while count < len(posts) and len(format_feed_for_prompt(posts[: count + 1], now)) <= len(rendered):
        count += 1
    return rendered, count


def build_prompt(
    agent: SocialAgent, posts: Sequence[Post], now: datetime, max_chars: int | None, style: str = "schema"
) -> AgentPrompt:
    """The messages for one agent and its ranked feed, in `style` (`schema` or `example`)."""
    feed, n_posts = shown_posts(posts, now, max_chars)
    if style == "schema":
        messages = (
            # the rules first: every agent's prompt starts with the same tokens, whose KV cache a backend reuses
            {"role": "system", "content": f"{RULES}\n\n{persona(agent)}"},
            {"role": "user", "content": f"Your feed:\n\n{feed or '(empty)'}\n\nYour answer:"},
        )
    elif style == "example":
        user = (
            f"{persona(agent)}\n\nYour feed:\n\n{feed or '(empty)'}\n\n"
            f"Example answer: {json.dumps(EXAMPLE)}\n"
            "Most posts get no reaction; act only on posts you care about. Your answer:"
        )
        messages = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": user})
    else:
        raise ValueError(f"prompt_style: unknown {style!r}; allowed: {', '.join(PROMPT_STYLES)}")
    return AgentPrompt(messages=messages, n_posts=n_posts)
