"""Feeds rendered as agent-readable text (REQ-FEED-6)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from prism_experiments.domain import Post, as_utc

#: REQ-FEED-6.2: media indicators; the design names the image and video emoji, the GIF one is ours.
MEDIA_LABELS: dict[str, tuple[str, str]] = {
    "image": ("\N{CAMERA}", "IMAGE"),
    "video": ("\N{CLAPPER BOARD}", "VIDEO"),
    "gif": ("\N{FILM FRAMES}\ufe0f", "GIF"),
}
LIKE, RESHARE, REPLY = "\u2764\ufe0f", "\N{CLOCKWISE RIGHTWARDS AND LEFTWARDS OPEN CIRCLE ARROWS}", "\N{SPEECH BALLOON}"


def relative_time(timestamp: datetime, now: datetime) -> str:
    """ "just now" under a minute (or in the future), then "Nm ago", "Nh ago", "Nd ago" (REQ-FEED-6.4)."""
    seconds = (as_utc(now) - as_utc(timestamp)).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"


def format_post(post: Post, number: int, now: datetime) -> str:
    """One numbered post: header, text, media block, engagement line."""
    header = f"{number}. @{post.author_id} \u00b7 {relative_time(post.timestamp, now)}"
    if post.parent_id is not None:
        header += f" \u00b7 reply to {post.parent_id}"
    lines = [header, f"   {post.text}"]
    if post.has_media and post.media_type in MEDIA_LABELS:
        emoji, label = MEDIA_LABELS[post.media_type]
        description = post.media_description or "no description"
        lines.append(f"   [{emoji} {label}: {description}]")
    lines.append(f"   {LIKE} {post.likes}  {RESHARE} {post.reshares}  {REPLY} {post.replies}")
    return "\n".join(lines)


def format_feed_for_prompt(posts: Sequence[Post], now: datetime, max_chars: int | None = None) -> str:
    """Numbered posts separated by blank lines; with `max_chars`, stop before the post that would cross it.

    A post is never cut in half: the cap (REQ-RETRIEVAL-8) drops whole posts from the end.
    """
    if max_chars is not None and max_chars < 1:
        raise ValueError(f"max_chars: must be at least 1 or None, got {max_chars}")
    rendered = ""
    for number, post in enumerate(posts, start=1):
        block = format_post(post, number, now)
        candidate = f"{rendered}\n\n{block}" if rendered else block
        if max_chars is not None and len(candidate) > max_chars:
            break
        rendered = candidate
    return rendered
