"""The one command line every server shares: `python -m prism_experiments.ops.<server> start|stop|status
[--runs-dir DIR]` (and a server's own extra actions). Errors are one line on stderr and exit 2; `status` exits 1
when the server does not run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prism_experiments.ops.daemons import DaemonError
from prism_experiments.ops.state import server_home

#: an action: what it prints, and its exit code
Action = Callable[[argparse.Namespace, Path], tuple[list[str], int]]


@dataclass(frozen=True)
class Status:
    """What `status` prints, and whether the server runs (exit 0) or not (exit 1)."""

    running: bool
    lines: list[str]


@dataclass(frozen=True)
class ServerCommands:
    """A server's start / stop / status, as its command line runs them against a runs directory; `server` names
    both the command (`prog`) and the server's directory in the runs directory (`state.server_home`)."""

    server: str
    doc: str
    what: str
    start: Callable[[argparse.Namespace, Path], list[str]]
    stop: Callable[[Path], bool]
    status: Callable[[Path], Status]
    add_options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    more_actions: Mapping[str, Action] = field(default_factory=dict)

    def main(self, argv: list[str] | None = None) -> int:
        """Parse `argv` and run the action; a DaemonError is one line on stderr and exit 2."""
        from prism_experiments.locations import default_runs_dir

        parser = argparse.ArgumentParser(prog=self.server, description=self.doc.splitlines()[0])
        parser.add_argument("action", choices=["start", "stop", "status", *self.more_actions])
        self.add_options(parser)
        parser.add_argument("--runs-dir", type=Path, default=None)
        args = parser.parse_args(argv)
        runs_dir = args.runs_dir or default_runs_dir()
        try:
            lines, code = self._act(args, runs_dir)
        except DaemonError as error:
            print(f"{self.server}: {error}", file=sys.stderr)
            return 2
        for line in lines:
            print(line)
        return code

    def _act(self, args: argparse.Namespace, runs_dir: Path) -> tuple[list[str], int]:
        if args.action == "start":
            return self.start(args, runs_dir), 0
        if args.action == "stop":
            stopped = self.stop(runs_dir)
            return ["stopped" if stopped else f"no {self.what} recorded under {server_home(runs_dir, self.server)}"], 0
        if args.action == "status":
            status = self.status(runs_dir)
            return status.lines, 0 if status.running else 1
        return self.more_actions[args.action](args, runs_dir)
