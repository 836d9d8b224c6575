"""One registry shape for every extension point: ranking modes, deciders, LLM backends and metrics.

`Registry` holds named entries in registration order; `ClassRegistry` is the one for classes configured by a pydantic
model (ranking modes, deciders, LLM backends): a class registers under the name its config model declares (the default
of a Literal field: `mode`, `kind`, `backend`), and the registry gives the discriminated union of the registered config
models, a validated config by name, and the class for a config. A registry's entries come from the modules of one
package, each registering itself when `import_modules` imports it: adding one is a new module, never an edit of a list
(docs/extending.md). A class registry with a Hydra group also gives each entry its Hydra option when it registers
(`agents/decider=<kind>`): a node in Hydra's ConfigStore that extends the entry's generated schema, so no option file
is written by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, Any, Generic, TypeVar, Union

from hydra.core.config_store import ConfigStore
from pydantic import BaseModel, Discriminator, Tag

ConfigT = TypeVar("ConfigT", bound=BaseModel)
EntryT = TypeVar("EntryT")
ClassT = TypeVar("ClassT", bound=type)


def import_modules(package: str, path: Iterable[str], first: tuple[str, ...] = ()) -> None:
    """Import every module of `package` (`path`: its `__path__`): those in `first` in that order, then the rest by
    name."""
    names = sorted(module.name for module in pkgutil.iter_modules(path))
    for name in [*first, *(name for name in names if name not in first)]:
        importlib.import_module(f"{package}.{name}")


def entry_label(entry: object) -> str:
    """How a message names an entry: its `origin` (a metric's function) or its class name."""
    return str(getattr(entry, "origin", None) or getattr(entry, "__name__", repr(entry)))


class Registry(Mapping[str, EntryT]):
    """Entries by name, in registration order (a read-only mapping; `add` registers)."""

    def __init__(self, what: str, noun: str, option: str) -> None:
        #: `what` names an entry in messages ("ranking mode"), `noun` in the unknown-name error ("mode"), `option` the
        #: config key or command-line option that names one ("ranking.mode")
        self.what, self.noun, self.option = what, noun, option
        #: name -> entry, in registration order
        self.entries: dict[str, EntryT] = {}

    def add(self, name: str, entry: EntryT) -> EntryT:
        """Register `entry` under `name`; the same entry again (a module imported twice) is harmless."""
        if name in self.entries and self.entries[name] is not entry:
            raise ValueError(
                f"{self.what} {name!r} is registered twice: {entry_label(self.entries[name])}, {entry_label(entry)}"
            )
        self.entries[name] = entry
        return entry

    def __getitem__(self, name: str) -> EntryT:
        return self.entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, name: str) -> EntryT:
        """The entry registered under `name` (ValueError naming the option if none is)."""
        if name not in self.entries:
            raise self.unknown(name)
        return self.entries[name]

    def unknown(self, name: str) -> ValueError:
        """`ranking.mode: unknown mode 'x'; registered modes: ...` (the form of a config error for the union)."""
        return ValueError(
            f"{self.option}: unknown {self.noun} {name!r}; registered {self.noun}s: {', '.join(self.entries)}"
        )


class ClassRegistry(Registry[Any], Generic[ConfigT]):
    """Classes by name, each with `config_model`, a model whose `field` defaults to that name."""

    def __init__(
        self,
        what: str,
        field: str,
        option: str,
        default: str,
        hydra_group: str | None = None,
        nested_choices: Callable[[type[ConfigT]], dict[str, str]] | None = None,
    ) -> None:
        super().__init__(what, field, option)
        self.field, self.default = field, default
        #: the Hydra config group each entry is an option of (`agents/decider`), None for no options
        self.hydra_group = hydra_group
        #: sub-group -> its default option, for the sub-groups an entry's options select (a decider's `llm`)
        self.nested_choices = nested_choices or (lambda model: {})

    def name_of(self, model: type[ConfigT]) -> str:
        """The name a config model declares: the default of its `field`."""
        name = model.model_fields[self.field].default
        if not isinstance(name, str):
            raise TypeError(f"{model.__name__}.{self.field} needs a default: the {self.what}'s name as a Literal")
        return name

    def register(self, cls: ClassT) -> ClassT:
        """Class decorator: register `cls` under the name its `config_model` declares, and store its Hydra option."""
        name = self.name_of(cls.config_model)  # type: ignore[attr-defined]
        self.add(name, cls)
        if self.hydra_group is not None:
            ConfigStore.instance().store(group=self.hydra_group, name=name, node=self.hydra_option(name))
        return cls

    def hydra_option(self, name: str) -> dict[str, Any]:
        """The Hydra option of entry `name`: its generated schema (`conf/schema/<group>/<name>.yaml`, every default
        with its meaning), then the default option of each sub-group it selects."""
        nested = self.nested_choices(self.lookup(name).config_model)
        return {
            "defaults": [f"/schema/{self.hydra_group}/{name}@_here_", *({k: v} for k, v in nested.items()), "_self_"]
        }

    def config_models(self) -> dict[str, type[ConfigT]]:
        """name -> its config model, in registration order."""
        return {name: cls.config_model for name, cls in self.entries.items()}

    def class_for(self, config: ConfigT) -> Any:
        """The class registered for `config`'s name (ValueError naming the option if none is)."""
        name = getattr(config, self.field)
        cls = self.lookup(name)
        if not isinstance(config, cls.config_model):
            raise TypeError(f"{self.what} {name!r} takes a {cls.config_model.__name__}, got {type(config).__name__}")
        return cls

    def validate(self, name: str | None = None, **fields: Any) -> ConfigT:
        """The validated config of `name`, given by position or as the `field` keyword (`ranking_config(mode=...)`;
        default: the registry's default), with the other `fields` set."""
        # The name keyword selects the model: left in `fields`, it was validated against the default's model, where
        # any other name fails that model's Literal
        keyword = fields.pop(self.field, None)
        if name is not None and keyword is not None and keyword != name:
            raise ValueError(
                f"{self.option}: {self.noun} {name!r} given by position and {self.field}={keyword!r}: give it once"
            )
        name = name or keyword or self.default
        model: type[ConfigT] = self.lookup(name).config_model
        return model.model_validate({self.field: name, **fields})

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
