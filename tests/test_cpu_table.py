"""`make test-cpu`'s attribution (tests/cpu_table.py): a forked process counts under the test its worker logged, and
commands are grouped by kind."""

from __future__ import annotations

from pathlib import Path

from cpu_table import Sampled, attribute_forked, command_kind


def test_a_forked_process_and_its_children_count_under_the_logged_test(tmp_path: Path) -> None:
    (tmp_path / "forked-7.pids").write_text("100\ttests/test_a.py::test_one\t-m prism_experiments -m\nbroken line\n")
    seen = {
        (100, "1"): Sampled(3.0, "tests/test_z.py::test_started_the_server", "python zygote.py", (100, 50)),
        (101, "2"): Sampled(1.0, "tests/test_z.py::test_started_the_server", "python zygote.py", (101, 100, 50)),
        (102, "3"): Sampled(2.0, "tests/test_b.py::test_two", "python -m mlflow server", (102, 60)),
    }
    attribute_forked(seen, tmp_path)
    assert seen[(100, "1")].test == seen[(101, "2")].test == "tests/test_a.py::test_one"
    assert seen[(100, "1")].command == "-m prism_experiments -m"  # its argv, not the server's command line
    assert seen[(101, "2")].command == "python zygote.py"  # a fork of the fork: its own argv is unknown
    assert seen[(102, "3")].test == "tests/test_b.py::test_two"  # not forked: its inherited environment's test


def test_commands_are_grouped_by_program_or_module() -> None:
    assert command_kind("/x/.venv/bin/python -m prism_experiments -m experiment=smoke") == "python -m prism_experiments"
    assert command_kind("/usr/lib/postgresql/15/bin/postgres -D /tmp/db") == "postgres"
    assert command_kind("/x/bin/python3 /x/ray/_private/workers/default_worker.py --x") == "python default_worker.py"
    assert command_kind("python -c import sys; print(1)").startswith("python -c import sys")
    assert command_kind("") == "?"
