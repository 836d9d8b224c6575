"""A fork server for the processes the tests start: `python -m prism_experiments ...` and the other entry points.

Each such process spent 2-3 CPU-s importing Hydra, MLflow, SQLAlchemy, pandas and the simulation before doing what
its test checks, and the suite starts over a hundred of them (docs/testing.md, "Where the time goes"). The server
imports them once; each process is then a fork of it, as a sweep's joblib workers are forks of the launcher's fork
server (hydra_plugins/prism_launcher/prism_joblib_launcher.py): a real process with its own pid, environment,
working directory, standard streams and signals, running the same entry point with the same arguments, and ending
as the interpreter would (its exit code, SystemExit, a traceback and exit 1, or death by SIGINT for an uncaught
Ctrl-C).

What differs from `exec`: the process's parent is the server, not the test (nothing here asks for its parent), and it
starts with the modules imported, so a test of start-up itself (what a run imports, a signal during its imports, a
`sitecustomize` on its PYTHONPATH) starts a real interpreter instead (`real_process`).

The server is single-threaded (forking a threaded process is unsafe) and imports no native thread pool (torch is
imported by the forked process that needs it, as in the launcher's fork server). Protocol on a Unix socket, one
connection per process: the client sends a JSON header and its three standard streams' descriptors (SCM_RIGHTS);
the server answers `{"pid": n}` once forked and `{"status": s}` (os.waitpid's) when the process ends.
"""

from __future__ import annotations

import array
import json
import os
import select
import signal
import socket
import sys
from pathlib import Path

#: what the server imports before it forks: everything an entry point imports before it does its work
PRELOADED = (
    "prism_experiments.__main__",
    "prism_experiments.harness.job",
    "prism_experiments.harness.sweep",
    "prism_experiments.simulation",
    "prism_experiments.tracking.store",
    "prism_experiments.analysis.cli",
    "prism_experiments.harness.reproduce",
    "mlflow.store.tracking.sqlalchemy_store",
    "hydra_plugins.hydra_joblib_launcher._core",
    "hydra_plugins.prism_launcher.prism_joblib_launcher",
)
#: the largest JSON header a client sends (argv and environment)
MAX_HEADER = 1 << 20


def send_message(connection: socket.socket, message: dict[str, object], fds: tuple[int, ...] = ()) -> None:
    """One JSON message (newline-terminated), with descriptors alongside when given."""
    data = json.dumps(message).encode() + b"\n"
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    connection.sendmsg([data], ancillary)


def receive_message(
    connection: socket.socket, max_fds: int = 0, pending: bytearray | None = None
) -> tuple[dict[str, object] | None, list[int]]:
    """One JSON message and the descriptors sent with it; (None, []) when the peer closed. Two messages can arrive in
    one read (a process that ends at once: its pid and its status): `pending` keeps what follows the first."""
    buffer = pending if pending is not None else bytearray()
    fds: list[int] = []
    while b"\n" not in buffer:
        chunk, ancillary, _, _ = connection.recvmsg(MAX_HEADER, socket.CMSG_SPACE(max_fds * 4) if max_fds else 0)
        if not chunk:
            return None, fds
        buffer += chunk
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += list(array.array("i", payload[: len(payload) - len(payload) % 4]))
    end = buffer.index(b"\n") + 1
    message = json.loads(bytes(buffer[:end]))
    del buffer[:end]
    return message, fds


def _run_forked(header: dict[str, object], fds: list[int]) -> int:
    """In the forked process: become the process the header asks for, run it, and return its exit code."""
    if header.get("new_session"):
        os.setsid()
    os.chdir(str(header["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(header["env"]).items()})  # type: ignore[call-overload]
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    for number in (signal.SIGTERM, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # what a new interpreter installs
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    argv = [str(arg) for arg in list(header["argv"])]  # type: ignore[call-overload]
    import runpy

    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]  # runpy puts the module's path first, as `python -m` does
            sys.path[0] = os.getcwd()
            # it runs as __main__ from its code, as `python -m` does; the copy imported here would only make runpy
            # warn that the module was imported before it ran
            sys.modules.pop(argv[1], None)
            sys.modules.pop(f"{argv[1]}.__main__", None)
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            main = type(sys)("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        else:
            raise ValueError(f"argv: -m module or -c code expected, got {argv[:2]}")
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except KeyboardInterrupt:
        _finish()
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as the interpreter ends on an uncaught Ctrl-C: by SIGINT
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    _finish()
    return code


def _exit_code(code: object) -> int:
    """What the interpreter makes of `SystemExit(code)`: None is 0, an int itself, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    """What the interpreter does at exit before the process ends: join non-daemon threads, run atexit, flush."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def serve(path: Path) -> None:
    """Import PRELOADED, listen on `path`, and fork one process per connection until stdin closes."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}  # pid -> the connection that reports its end
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select through the wakeup fd
    while True:
        ready, _, _ = select.select([listener, wake_read, sys.stdin], [], [])
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):
            return  # the test session ended
        if wake_read in ready:
            os.read(wake_read, 4096)
        _report_ended(waiting)
        if listener in ready:
            connection, _ = listener.accept()
            header, fds = receive_message(connection, max_fds=3)
            if header is None:
                connection.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                connection.close()
                os.close(wake_read)
                os.close(wake_write)
                signal.set_wakeup_fd(-1)
                os._exit(_run_forked(header, fds))
            for fd in fds:
                os.close(fd)
            send_message(connection, {"pid": pid})
            waiting[pid] = connection
            _report_ended(waiting)


def _report_ended(waiting: dict[int, socket.socket]) -> None:
    """Send each ended process's wait status to its client and close the connection."""
    for pid in list(waiting):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done:
            connection = waiting.pop(pid)
            try:
                send_message(connection, {"status": status})
            except OSError:
                pass  # the client is gone
            connection.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
