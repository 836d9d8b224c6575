"""The answer an LLM agent gives for one feed: a JSON object validated with pydantic.

The same schema constrains decoding (local backend) and the server's `response_format` (HTTP backend);
validation still runs on every answer, since a truncated or unconstrained answer may not fit it.
"""

from __future__ import annotations

import json
from typing import Any

from json_repair import repair_json
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class Reply(BaseModel):
    """A reply to one post of the feed, by its number."""

    model_config = ConfigDict(extra="forbid")

    to: int
    text: str = Field(min_length=1)


class FeedActions(BaseModel):
    """What the agent does with its feed: post numbers it likes, reshares, follows the author of, replies to."""

    model_config = ConfigDict(extra="forbid")

    like: list[int] = Field(default_factory=list)
    reshare: list[int] = Field(default_factory=list)
    follow: list[int] = Field(default_factory=list)
    reply: Reply | None = None
    #: a new post of its own, or null
    post: str | None = None

    @model_validator(mode="after")
    def _distinct(self) -> FeedActions:
        """A post named twice in one list is one action on it (the grammar cannot forbid repeats)."""
        for name in ("like", "reshare", "follow"):
            setattr(self, name, list(dict.fromkeys(getattr(self, name))))
        return self


NO_ACTION = FeedActions()


class ActionError(ValueError):
    """An answer that is not a valid `FeedActions` for its feed; the message says why, in one line."""


def action_schema(n_posts: int, max_text_chars: int) -> dict[str, Any]:
    """The JSON schema of an answer for a feed of `n_posts` numbered posts (1..n_posts)."""
    number = {"type": "integer", "minimum": 1, "maximum": max(n_posts, 1)}
    numbers = {"type": "array", "items": number, "maxItems": max(n_posts, 0)}
    # no uniqueItems: llguidance does not implement it; `FeedActions` reads a repeated number once
    text = {"type": "string", "minLength": 1, "maxLength": max_text_chars}
    reply = {
        "type": "object",
        "properties": {"to": number, "text": text},
        "required": ["to", "text"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "like": numbers,
            "reshare": numbers,
            "follow": numbers,
            "reply": {"anyOf": [reply, {"type": "null"}]},
            "post": {"anyOf": [text, {"type": "null"}]},
        },
        "required": ["like", "reshare", "follow", "reply", "post"],
        "additionalProperties": False,
    }


def parse_actions(raw: str, n_posts: int, max_text_chars: int) -> FeedActions:
    """`raw` as `FeedActions` whose post numbers are in 1..n_posts and texts fit; else `ActionError`."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ActionError(f"not JSON: {exc.msg if isinstance(exc, json.JSONDecodeError) else 'too deep'}") from None
    if not isinstance(data, dict):
        raise ActionError(f"not a JSON object: got {type(data).__name__}")
    try:
        actions = FeedActions.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "answer"
        raise ActionError(f"{where}: {first['msg']}") from None
    numbers = [*actions.like, *actions.reshare, *actions.follow, *([actions.reply.to] if actions.reply else [])]
    out_of_range = sorted({n for n in numbers if not 1 <= n <= n_posts})
    if out_of_range:
        raise ActionError(f"post numbers must be 1 to {n_posts}, got {out_of_range}")
    texts = [actions.post or "", actions.reply.text if actions.reply else ""]
    if any(len(t) > max_text_chars for t in texts):
        raise ActionError(f"reply.text and post: at most {max_text_chars} characters")
    return actions


def close_cut_answer(raw: str, n_posts: int, max_text_chars: int) -> FeedActions | None:
    """An answer cut off at `max_new_tokens`, closed where it stopped (json-repair), or None if still invalid.

    Constrained decoding keeps every prefix valid, so only the budget can leave an answer open; closing it
    keeps what the model had decided (a text ends where it was cut) without another model call.
    """
    try:
        return parse_actions(str(repair_json(raw)), n_posts, max_text_chars)
    except ActionError:
        return None


def repair_message(raw: str, error: str) -> str:
    """The one follow-up turn that asks the model to fix an invalid answer."""
    shown = raw if len(raw) <= 400 else raw[:400] + "..."
    return (
        f"Your answer was not valid ({error}). It was: {shown}\n"
        "Answer again with only the JSON object, keys like, reshare, follow, reply, post."
    )
