"""The one state-file format of every server the project starts: `<runs_dir>/<server>/state.json`, a frozen
dataclass as JSON holding what finds and stops it later (its PIDs and ports)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

STATE_FILE = "state.json"


def server_home(runs_dir: Path, server: str) -> Path:
    """Where `server` (`ray-head`, `slurm-local`, `tracking-server`) keeps its state, logs and data."""
    return runs_dir.resolve() / server


@dataclass(frozen=True)
class StateFile(Generic[T]):
    """What a started server needs to be found and stopped later, as JSON at `path`."""

    path: Path
    kind: type[T]

    @classmethod
    def in_home(cls, home: Path, kind: type[T]) -> StateFile[T]:
        """The state file of the server whose files live in `home`."""
        return cls(home / STATE_FILE, kind)

    def read(self) -> T | None:
        """The recorded state, or None when nothing was started (or it was stopped)."""
        return self.kind(**json.loads(self.path.read_text())) if self.path.is_file() else None

    def write(self, state: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(asdict(state)))

    def stop(self, stop_servers: Callable[[T], None]) -> bool:
        """Stop what the file records with `stop_servers` and forget it; False when nothing was recorded."""
        state = self.read()
        if state is None:
            return False
        stop_servers(state)
        self.path.unlink(missing_ok=True)
        return True


def export_line(client_env: Mapping[str, str]) -> str:
    """The shell line that points a client (a sweep) at a started server."""
    return "export " + " ".join(f"{key}={shlex.quote(value)}" for key, value in client_env.items())
