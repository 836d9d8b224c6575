"""One registry shape for every extension point: ranking modes, deciders and LLM backends.

A class registers under the name its config model declares (the default of a Literal field: `mode`, `kind`,
`backend`); the registry gives the pydantic discriminated union of the registered config models, a validated config
by name, and the class for a config. Adding a mode, decider or backend is a new module, never an edit of a list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Generic, TypeVar, Union

from pydantic import BaseModel, Discriminator, Tag

ConfigT = TypeVar("ConfigT", bound=BaseModel)
ClassT = TypeVar("ClassT", bound=type)


class Registry(Generic[ConfigT]):
    """Classes by name, each with `config_model`, a model whose `field` defaults to that name."""

    def __init__(self, what: str, field: str, option: str, default: str) -> None:
        #: `what` names an entry in messages ("ranking mode"), `option` the config key that picks one
        self.what, self.field, self.option, self.default = what, field, option, default
        #: name -> class, in registration order
        self.classes: dict[str, Any] = {}

    def name_of(self, model: type[ConfigT]) -> str:
        """The name a config model declares: the default of its `field`."""
        name = model.model_fields[self.field].default
        if not isinstance(name, str):
            raise TypeError(f"{model.__name__}.{self.field} needs a default: the {self.what}'s name as a Literal")
        return name

    def register(self, cls: ClassT) -> ClassT:
        """Class decorator: register `cls` under the name its `config_model` declares."""
        name = self.name_of(cls.config_model)  # type: ignore[attr-defined]
        if name in self.classes and self.classes[name] is not cls:
            raise ValueError(f"{self.what} {name!r} is registered twice: {self.classes[name].__name__}, {cls.__name__}")
        self.classes[name] = cls
        return cls

    def config_models(self) -> dict[str, type[ConfigT]]:
        """name -> its config model, in registration order."""
        return {name: cls.config_model for name, cls in self.classes.items()}

    def class_for(self, config: ConfigT) -> Any:
        """The class registered for `config`'s name (ValueError naming the option if none is)."""
        name = getattr(config, self.field)
        if name not in self.classes:
            raise self.unknown(name)
        cls = self.classes[name]
        if not isinstance(config, cls.config_model):
            raise TypeError(f"{self.what} {name!r} takes a {cls.config_model.__name__}, got {type(config).__name__}")
        return cls

    def validate(self, name: str | None = None, **fields: Any) -> ConfigT:
        """The validated config of `name` (default: the registry's default) with `fields` set."""
        name = name or self.default
        models = self.config_models()
        if name not in models:
            raise self.unknown(name)
        return models[name].model_validate({self.field: name, **fields})

    def unknown(self, name: str) -> ValueError:
        """`ranking.mode: unknown mode 'x'; registered modes: ...` (the form of a config error for the union)."""
        return ValueError(
            f"{self.option}: unknown {self.field} {name!r}; registered {self.field}s: {', '.join(self.classes)}"
        )

    def discriminator(self) -> Callable[[Any], Any]:
        """A mapping's `field` (the default when absent) or a config's; named after the field, which pydantic's
        errors for an unknown name quote."""
        field, default = self.field, self.default

        def tag(value: Any) -> Any:
            return value.get(field, default) if isinstance(value, dict) else getattr(value, field, None)

        tag.__name__ = tag.__qualname__ = field
        return tag

    def union(self) -> Any:
        """The pydantic discriminated union of every registered config model (after their modules are imported)."""
        members = tuple(Annotated[model, Tag(name)] for name, model in self.config_models().items())
        return Annotated[Union[members], Discriminator(self.discriminator())]  # noqa: UP007  (a runtime tuple)
