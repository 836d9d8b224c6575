"""Hydra's base schema, generated from the pydantic models: `python -m prism_experiments.config_schema`.

The models are the only place a default is written. This module renders each group's defaults
(and each ranking mode's) as `conf/schema/**.yaml`, with the fields' `#:` comments and
descriptions as YAML comments; option files extend them (`defaults: [/schema/<group>@_here_, _self_]`)
and hold only what differs. tests/test_config_schema.py fails when a file is out of date.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from prism_experiments.config import ExperimentConfig
from prism_experiments.deciders import config_models as decider_models
from prism_experiments.llm import backend_config_models
from prism_experiments.locations import CONFIG_DIR
from prism_experiments.ranking import config_models
from prism_experiments.ranking.serving_config import ServingConfig

SCHEMA_DIR = CONFIG_DIR / "schema"
REGENERATE = "python -m prism_experiments.config_schema"
#: top-level keys the root schema leaves out, and why
ROOT_EXCLUDED: dict[str, str] = {
    "force": "a `+force=true` flag: a key in the base would make the `+` fail",
    "force_memory": "a `+force_memory=true` flag, as `force`",
}
#: groups without a generated base, and why
GROUPS_EXCLUDED: dict[str, str] = {
    "paths": "runs_dir's default reads $PRISM_RUNS_DIR: conf/paths/default.yaml keeps the interpolation",
    "ranking": "one base per mode under schema/ranking/, from the mode registry",
}
#: groups that are null in the root (absent: a behaviour off) and whose option files extend the model's defaults
OPTIONAL_GROUPS: dict[str, type[BaseModel]] = {"serving": ServingConfig}
#: fields that are config groups of their own (selected by their option files, not written in the parent's base)
NESTED_GROUPS: dict[str, str] = {
    "agents.decider": "one base per decider under schema/agents/decider/, from the decider registry",
    "agents.decider.llm": "one base per backend under schema/agents/decider/llm/, from the backend registry",
}
#: Hydra's value for a field the user must set (a model field without a default)
MISSING = "???"


@cache
def field_comments(model: type[BaseModel]) -> dict[str, list[str]]:
    """field -> its `#:` comment lines in the class source (inherited fields included), else its description."""
    comments: dict[str, list[str]] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):  # a class built at runtime has no source: descriptions only
            continue
        lines = source.splitlines()
        (node,) = ast.parse(source).body
        assert isinstance(node, ast.ClassDef)
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                above: list[str] = []
                index = statement.lineno - 2
                while index >= 0 and lines[index].strip().startswith("#:"):
                    above.insert(0, lines[index].strip().removeprefix("#:").strip())
                    index -= 1
                if above:
                    comments[statement.target.id] = above
    for name, info in model.model_fields.items():
        if name not in comments and info.description:
            comments[name] = [info.description]
    return comments


def nested_model(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The model class of field `name` when it is a single nested model, else None."""
    annotation = model.model_fields[name].annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def scalar(value: Any) -> str:
    """A value as one line of YAML (flow style for lists and mappings)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000, sort_keys=False, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def render_fields(model: type[BaseModel], data: dict[str, Any], indent: str = "") -> Iterator[str]:
    """YAML lines of `data` (the model's JSON dump), each key under its comments."""
    comments = field_comments(model)
    for name, value in data.items():
        yield from (f"{indent}# {line}".rstrip() for line in comments.get(name, []))
        inner = nested_model(model, name)
        if inner is not None and isinstance(value, dict) and value:
            yield f"{indent}{name}:"
            yield from render_fields(inner, value, indent + "  ")
        else:
            yield f"{indent}{name}: {scalar(value)}"


def render(model: type[BaseModel], data: dict[str, Any]) -> str:
    """A generated schema file: a do-not-edit header, then every default with its comments."""
    header = [
        f"# generated by `{REGENERATE}` from {model.__module__}.{model.__qualname__}: do not edit.",
        "# Every default lives in the model; option files extend this base with what differs.",
    ]
    if model.__doc__:
        header.append(f"# {model.__name__}: {model.__doc__.strip().splitlines()[0]}")
    return "\n".join([*header, *render_fields(model, data)]) + "\n"


def model_defaults(model: type[BaseModel], **fields: Any) -> dict[str, Any]:
    """The JSON-mode defaults of `model` (with `fields` set); a field without a default is Hydra's `???`."""
    values: dict[str, Any] = {
        name: MISSING for name, info in model.model_fields.items() if info.is_required() and name not in fields
    }
    return model.model_construct(**values, **fields).model_dump(mode="json")


def schema_files() -> dict[Path, str]:
    """Path under conf/schema -> its generated text: the root keys, one file per group, one per ranking mode,
    decider and LLM backend."""
    defaults = ExperimentConfig().model_dump(mode="json")
    files: dict[Path, str] = {}
    root_fields = [
        name
        for name in ExperimentConfig.model_fields
        if nested_model(ExperimentConfig, name) is None and name not in ROOT_EXCLUDED and name not in GROUPS_EXCLUDED
    ]
    files[Path("root.yaml")] = render(ExperimentConfig, {name: defaults[name] for name in root_fields})
    for name in ExperimentConfig.model_fields:
        group = nested_model(ExperimentConfig, name)
        if group is not None and name not in GROUPS_EXCLUDED:
            data = {k: v for k, v in defaults[name].items() if f"{name}.{k}" not in NESTED_GROUPS}
            files[Path(f"{name}.yaml")] = render(group, data)
    for name, model in OPTIONAL_GROUPS.items():
        files[Path(f"{name}.yaml")] = render(model, model().model_dump(mode="json"))
    for mode, model in config_models().items():
        files[Path("ranking") / f"{mode}.yaml"] = render(model, model_defaults(model))
    for kind, model in decider_models().items():
        data = {k: v for k, v in model_defaults(model).items() if f"agents.decider.{k}" not in NESTED_GROUPS}
        files[Path("agents") / "decider" / f"{kind}.yaml"] = render(model, data)
    for backend, model in backend_config_models().items():
        files[Path("agents") / "decider" / "llm" / f"{backend}.yaml"] = render(model, model_defaults(model))
    return files


def stale_files(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Generated files that are missing or differ from the models, and schema files no model produces."""
    expected = schema_files()
    stale = [
        path
        for path, text in expected.items()
        if not (schema_dir / path).is_file() or (schema_dir / path).read_text() != text
    ]
    present = {path.relative_to(schema_dir) for path in schema_dir.rglob("*.yaml")} if schema_dir.is_dir() else set()
    return sorted(stale + [path for path in present if path not in expected])


def write_schema(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """Rewrite conf/schema from the models (removing files no model produces); returns the files written."""
    expected = schema_files()
    if schema_dir.is_dir():
        for path in schema_dir.rglob("*.yaml"):
            if path.relative_to(schema_dir) not in expected:
                path.unlink()
    for path, text in expected.items():
        target = schema_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return sorted(expected)


def main(argv: list[str]) -> int:
    """Regenerate conf/schema; `--check` only reports stale files (exit 1 if any)."""
    if "--check" in argv:
        stale = stale_files(SCHEMA_DIR)
        for path in stale:
            print(f"stale: conf/schema/{path}")
        if stale:
            print(f"regenerate with: {REGENERATE}")
        return 1 if stale else 0
    for path in write_schema(SCHEMA_DIR):
        print(f"wrote conf/schema/{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
