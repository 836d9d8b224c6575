"""The one command line and state file every server of `ops/` shares (no server started: a recorded fake state)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from prism_experiments.ops.cli import ServerCommands, Status
from prism_experiments.ops.daemons import DaemonError
from prism_experiments.ops.state import StateFile, export_line, server_home


@dataclass(frozen=True)
class FakeState:
    pid: int
    port: int


def commands(stopped: list[FakeState]) -> ServerCommands:
    """A server whose start records a state, whose stop hands the recorded one to `stopped`."""

    def state_file(runs_dir: Path) -> StateFile[FakeState]:
        return StateFile.in_home(server_home(runs_dir, "fake-server"), FakeState)

    def start(args: argparse.Namespace, runs_dir: Path) -> list[str]:
        if args.port == 0:
            raise DaemonError("--port: 127.0.0.1:0 is in use; choose another (PORT=...)")
        state_file(runs_dir).write(FakeState(4242, args.port))
        return [f"started on {args.port}"]

    def status(runs_dir: Path) -> Status:
        state = state_file(runs_dir).read()
        return Status(True, [f"running: pid {state.pid}"]) if state else Status(False, ["not running"])

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--port", type=int, default=7)

    return ServerCommands(
        "fake-server",
        "A fake server.",
        "fake server",
        start,
        lambda d: state_file(d).stop(stopped.append),
        status,
        options,
    )


def test_start_status_stop_share_one_state_file_under_the_servers_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stopped: list[FakeState] = []
    cli = commands(stopped)
    runs = ["--runs-dir", str(tmp_path)]
    assert cli.main(["status", *runs]) == 1 and capsys.readouterr().out == "not running\n"
    assert cli.main(["start", "--port", "9", *runs]) == 0 and capsys.readouterr().out == "started on 9\n"
    assert (tmp_path / "fake-server" / "state.json").read_text() == '{"pid": 4242, "port": 9}'
    assert cli.main(["status", *runs]) == 0 and capsys.readouterr().out == "running: pid 4242\n"
    assert cli.main(["stop", *runs]) == 0 and capsys.readouterr().out == "stopped\n"
    assert stopped == [FakeState(4242, 9)] and not (tmp_path / "fake-server" / "state.json").exists()
    assert cli.main(["stop", *runs]) == 0
    assert capsys.readouterr().out == f"no fake server recorded under {tmp_path.resolve() / 'fake-server'}\n"


def test_a_failed_start_is_one_line_on_stderr_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert commands([]).main(["start", "--port", "0", "--runs-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert (
        captured.out == "" and captured.err == "fake-server: --port: 127.0.0.1:0 is in use; choose another (PORT=...)\n"
    )
    assert not (tmp_path / "fake-server").exists()


def test_the_export_line_quotes_what_a_shell_would_split() -> None:
    assert export_line({"A": "1", "B": "two words"}) == "export A=1 B='two words'"
