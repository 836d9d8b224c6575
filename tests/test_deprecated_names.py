"""Names renamed in the last release: each old name still imports, as the new object, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import warnings

import pytest

#: (module, old name, new name): the modules the old names were importable from before the rename
RENAMED: list[tuple[str, str, str]] = [
    ("prism_experiments.harness.sweep_file", "SweepContext", "SweepFile"),
    ("prism_experiments.bench.section_inputs", "BenchContext", "SectionInputs"),
    ("prism_experiments.ranking", "RankerContext", "RankerInputs"),
    ("prism_experiments.ranking.ranker_inputs", "RankerContext", "RankerInputs"),
    ("prism_experiments.deciders", "DeciderContext", "DeciderInputs"),
    ("prism_experiments.deciders.base", "DeciderContext", "DeciderInputs"),
    ("prism_experiments.analysis.report", "ReportContext", "ReportProvenance"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED, ids=[f"{m}.{o}" for m, o, _ in RENAMED])
def test_an_old_name_is_the_new_object_with_a_warning_naming_it(module: str, old: str, new: str) -> None:
    imported = importlib.import_module(module)
    message = f"{module}.{old} is deprecated: import {module}.{new} instead"
    with pytest.warns(DeprecationWarning, match=message) as caught:
        alias = getattr(imported, old)
    assert alias is getattr(imported, new)
    assert [warning.filename for warning in caught] == [__file__]  # the line that reads the old name
    namespace: dict[str, object] = {}
    with pytest.warns(DeprecationWarning, match=message):
        exec(f"from {module} import {old}", namespace)  # the import statement old code has
    assert namespace[old] is alias


@pytest.mark.parametrize("module", sorted({module for module, _, _ in RENAMED}))
def test_new_names_read_without_a_warning_and_unknown_names_still_fail(module: str) -> None:
    imported = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for new in (new for name, _, new in RENAMED if name == module):
            assert isinstance(getattr(imported, new), type)
        with pytest.raises(AttributeError, match=f"module '{module}' has no attribute 'NoSuchName'"):
            _ = imported.NoSuchName
