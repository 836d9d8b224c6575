"""What the argparse commands (`prism-compare`, `prism-replicate`, `prism-ope`) share: `main(argv)` returns the exit
code, argparse's own included (0 after --help, 2 for a bad option), so tests call it in-process; a usage error is
one `<program>: error: <line>` on stderr and exit 2, as argparse words its own."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

EXIT_OK = 0
EXIT_USAGE = 2


class Main(Protocol):
    """A command's entry point (pyproject's [project.scripts] call it without arguments)."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def command_main(build_parser: Callable[[], argparse.ArgumentParser], run: Callable[[argparse.Namespace], int]) -> Main:
    """The command's `main(argv)`: `run` on the parsed arguments, or the code argparse ended the parse with."""

    def main(argv: Sequence[str] | None = None) -> int:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exit_:
            return int(exit_.code or 0)
        return run(args)

    main.__doc__ = run.__doc__
    return main


def usage_error(program: str, message: str) -> int:
    """Print `<program>: error: <message>` on stderr; the usage exit code (2)."""
    print(f"{program}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
