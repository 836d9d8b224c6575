"""The post record every part of the harness passes around (REQ-FEED-1)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prism_experiments.domain.timestamps import as_utc

MediaType = Literal["image", "video", "gif", "none"]
MEDIA_TYPES: tuple[str, ...] = ("image", "video", "gif", "none")
#: The post-format classes of REQ-RETRIEVAL-6 (storytelling is the fallback class): what `Post.format` holds, what
#: the classifier assigns and what archetypes prefer or dislike
POST_FORMATS: tuple[str, ...] = (
    "list",
    "most_people_think_x",
    "contrarian_take",
    "before_after",
    "question",
    "tip",
    "storytelling",
)


class Post(BaseModel):
    """A post (REQ-FEED-1) plus `topic`, `parent_id` (reply target) and `format` (REQ-RETRIEVAL-6)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    author_id: str = Field(min_length=1)
    text: str
    timestamp: datetime
    topic: str | None = None
    has_media: bool = False
    media_type: MediaType = "none"
    media_description: str | None = None
    likes: int = Field(default=0, ge=0)
    reshares: int = Field(default=0, ge=0)
    replies: int = Field(default=0, ge=0)
    velocity: float = Field(default=0.0, ge=0.0)
    parent_id: str | None = None
    format: str = "storytelling"
    #: politics (REQ-POL-4, docs/politics.md); None: the world has no politics (or the corpus file gives none)
    political: bool | None = None
    #: left-right slant in [-1, 1] of a political post (author position plus noise); None otherwise
    slant: float | None = Field(default=None, ge=-1.0, le=1.0, allow_inf_nan=False)
    #: out-group animosity in [0, 1]: out-group terms / MAX_TERMS (Rathje et al. 2021)
    animosity: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    #: moral-emotional intensity in [0, 1]: moral-emotional words / MAX_TERMS (Brady et al. 2017)
    moral_emotion: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)

    @field_validator("timestamp")
    @classmethod
    def _timestamp_is_utc(cls, value: datetime) -> datetime:
        return as_utc(value)

    @model_validator(mode="after")
    def _media_is_consistent(self) -> Post:
        if self.has_media and self.media_type == "none":
            raise ValueError("media_type: must be one of image, video, gif when has_media is true")
        if not self.has_media and self.media_type != "none":
            raise ValueError("media_type: must be 'none' when has_media is false")
        return self

    @model_validator(mode="after")
    def _share_complete_fields_set(self) -> Post:
        """A post given every field (a generated corpus, a store's round trip) holds the one shared set of field
        names instead of its own (728 bytes a post, 0.7 GB of the huge preset's million: docs/history/bench.md).
        Safe to share: setting a field adds its name to the set, already there."""
        if len(self.__pydantic_fields_set__) == len(_EVERY_FIELD):
            object.__setattr__(self, "__pydantic_fields_set__", _EVERY_FIELD)
        return self

    def changeable_copy(self) -> Post:
        """A shallow copy to change (engagement counters) that still shares the one fields set when this post does."""
        copied = self.model_copy()
        if self.__pydantic_fields_set__ is _EVERY_FIELD:
            object.__setattr__(copied, "__pydantic_fields_set__", _EVERY_FIELD)
        return copied

    @property
    def is_reply(self) -> bool:
        return self.parent_id is not None


#: every field's name: the fields set a post given all of them shares (`Post._share_complete_fields_set`)
_EVERY_FIELD: set[str] = set(Post.model_fields)
