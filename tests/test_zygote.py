"""The tests' fork server (tests/zygote.py): a forked process behaves as a new interpreter running the same
command would, in what the tests read of it: exit codes, streams, environment, working directory, signals."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from process_helpers import environment, forked, forked_run

pytestmark = pytest.mark.integration

PYTHON = sys.executable


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("pass", 0),
        ("import sys; sys.exit(3)", 3),
        ("import sys; sys.exit('a message')", 1),
        ("raise ValueError('boom')", 1),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM),
    ],
)
def test_the_exit_status_is_the_interpreters(code: str, expected: int) -> None:
    forked_status = forked_run([PYTHON, "-c", code]).returncode
    real_status = subprocess.run([PYTHON, "-c", code], capture_output=True).returncode
    assert forked_status == real_status == expected


def test_streams_environment_directory_and_arguments_are_the_requested_ones(tmp_path: Path) -> None:
    code = "import os, sys; print(os.getcwd(), os.environ['ZYGOTE_CHECK'], sys.argv[1:]); sys.stderr.write('e\\n')"
    env = environment() | {"ZYGOTE_CHECK": "42"}
    result = forked_run([PYTHON, "-c", code, "one", "two"], env=env, cwd=tmp_path)
    assert result.stdout.split() == [str(tmp_path), "42", "['one',", "'two']"]
    assert result.stderr == "e\n"
    assert "ZYGOTE_CHECK" not in forked_run([PYTHON, "-c", "import os; print(sorted(os.environ))"]).stdout


def test_a_module_runs_as_main_with_its_arguments_and_an_uncaught_exception_prints_its_traceback() -> None:
    result = forked_run([PYTHON, "-m", "prism_experiments", "ranking=bogus"])
    assert result.returncode == 2 and "ranking" in result.stderr and "bogus" in result.stderr, result.stderr[-2000:]
    failed = forked_run([PYTHON, "-c", "def f():\n    raise KeyError('x')\nf()"])
    assert failed.returncode == 1 and "Traceback" in failed.stderr and "KeyError: 'x'" in failed.stderr


def test_atexit_runs_and_output_is_flushed_at_the_end() -> None:
    code = "import atexit, sys; atexit.register(lambda: print('at exit')); sys.stdout.write('no newline')"
    assert forked_run([PYTHON, "-c", code]).stdout == "no newlineat exit\n"


def test_signals_start_at_a_new_interpreters_dispositions() -> None:
    """SIGTERM ends it, SIGINT raises KeyboardInterrupt (uncaught: the process dies by SIGINT, as Python's does)."""
    ready = "import sys, time; print('ready', flush=True); time.sleep(60)"
    for signum in (signal.SIGTERM, signal.SIGINT):
        process = forked([PYTHON, "-c", ready])
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        assert process.returncode == -signum
        assert ("KeyboardInterrupt" in str(err)) == (signum == signal.SIGINT)


def test_wait_times_out_and_poll_says_running_until_the_end() -> None:
    process = forked([PYTHON, "-c", "import time; time.sleep(60)"])
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)
    process.kill()
    assert process.wait(timeout=30) == -signal.SIGKILL and process.poll() == -signal.SIGKILL


def test_a_new_session_makes_the_process_its_groups_leader() -> None:
    code = "import os; print(os.getpgid(0) == os.getpid(), os.getsid(0) == os.getpid())"
    assert forked_run([PYTHON, "-c", code]).stdout.split() == ["False", "False"]
    process = forked([PYTHON, "-c", code], start_new_session=True)
    out, _ = process.communicate(timeout=30)
    assert str(out).split() == ["True", "True"]


def test_two_forks_draw_different_random_numbers_and_have_their_own_pid() -> None:
    code = "import os, random, uuid; print(os.getpid(), random.random(), uuid.uuid4())"
    first, second = (forked_run([PYTHON, "-c", code]).stdout.split() for _ in range(2))
    assert first[0] != second[0] and first[1] != second[1] and first[2] != second[2]


def test_the_fork_server_imported_the_project_and_no_thread_or_torch() -> None:
    """What makes a fork cheap and safe: the run's modules loaded once, a single thread, no native thread pool."""
    code = (
        "import sys, threading; "
        "print('prism_experiments.harness.job' in sys.modules, 'torch' in sys.modules, threading.active_count())"
    )
    assert forked_run([PYTHON, "-c", code]).stdout.split() == ["True", "False", "1"]


def test_input_reaches_stdin() -> None:
    assert forked_run([PYTHON, "-c", "import sys; print(sys.stdin.read().upper())"], input="docs").stdout == "DOCS\n"


def test_a_preloaded_entry_point_runs_without_a_warning_a_new_interpreter_would_not_print() -> None:
    result = forked_run([PYTHON, "-m", "prism_experiments.analysis.cli", "--help"])
    assert result.returncode == 0 and "usage" in result.stdout and result.stderr == "", result.stderr


def test_a_process_that_ends_at_once_is_read_whole_when_its_pid_and_status_arrive_together() -> None:
    """The server's two messages (pid, then status) can reach the client in one read: each is still read apart."""
    import socket

    from zygote import receive_message, send_message

    server, client = socket.socketpair()
    with server, client:
        send_message(server, {"pid": 7})
        send_message(server, {"status": 3})
        server.shutdown(socket.SHUT_WR)
        pending = bytearray()
        assert receive_message(client, pending=pending)[0] == {"pid": 7}
        assert receive_message(client, pending=pending)[0] == {"status": 3}
        assert receive_message(client, pending=pending)[0] is None
