"""`make test-cpu`: run a command (by default `make test`) and print where its CPU went, test file by test file.

Two instruments, because neither alone sees everything:
- each pytest worker logs, per test, its own CPU (PRISM_TEST_CPU_LOG, tests/conftest.py);
- a sampler reads every process's CPU from /proc every 0.2 s (proc(5): utime + stime of /proc/<pid>/stat) and files
  each process under the test in its PYTEST_CURRENT_TEST variable, which a process inherits from the test that
  started it: sweeps, their workers and orphans, servers and daemons, whatever their parent.
A process that lives less than 0.2 s may be missed (a few ms each); the machine's busy CPU (/proc/stat) is the
total the table is checked against. The table is markdown, for docs/testing.md ("Where the time goes").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sampled:
    """A process seen by the sampler: its CPU so far, the test it belongs to and its command."""

    cpu_s: float
    test: str
    command: str
    lineage: tuple[int, ...] = ()  # its pid, then its ancestors' at first sight (a forked process's test is its own)


@dataclass
class Sampler:
    """Every process's CPU, sampled from /proc until `stop()`."""

    interval_s: float = 0.2
    seen: dict[tuple[int, str], Sampled] = field(default_factory=dict)
    _stopped: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stopped.is_set():
            self.sample()
            self._stopped.wait(self.interval_s)
        self.sample()

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                self._read(int(entry))

    def _read(self, pid: int) -> None:
        fields = _stat(pid)
        if fields is None:
            return
        key, cpu = (pid, fields[19]), (int(fields[11]) + int(fields[12])) / TICK  # starttime tells reused pids apart
        if key in self.seen:
            self.seen[key].cpu_s = max(self.seen[key].cpu_s, cpu)
        elif (lineage := _lineage(pid, int(fields[1]), os.getpid())) is not None:  # the command's, not the machine's
            self.seen[key] = Sampled(cpu, _current_test(pid), _command(pid), lineage)

    def stop(self) -> None:
        self._stopped.set()


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (proc(5)), None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _lineage(pid: int, parent: int, ancestor: int) -> tuple[int, ...] | None:
    """The pids from `pid` up to `ancestor` when the process descends from it (orphans included: `ancestor` is their
    subreaper, `become_subreaper`), else None."""
    chain = [pid]
    while parent > 1:
        if parent == ancestor:
            return tuple(chain)
        chain.append(parent)
        fields = _stat(parent)
        if fields is None:
            return None
        parent = int(fields[1])
    return None


def attribute_forked(seen: dict[tuple[int, str], Sampled], log_dir: Path) -> None:
    """A process forked by the tests' fork server (tests/zygote.py), and what it forked, shows the server's
    environment, not its test: its test is the one the worker logged with its pid (process_helpers.forked)."""
    forked: dict[int, tuple[str, str]] = {}
    for log in log_dir.glob("forked-*.pids"):
        for line in log.read_text().splitlines():
            fields = line.split("\t", 2)
            if len(fields) == 3 and fields[0].isdigit():  # a line cut by a write in progress at exit: skipped
                forked[int(fields[0])] = (fields[1], fields[2])
    for process in seen.values():
        process.test = next((forked[pid][0] for pid in process.lineage if pid in forked), process.test)
        if process.lineage and process.lineage[0] in forked:  # its /proc cmdline is the fork server's
            process.command = forked[process.lineage[0]][1]


def command_kind(command: str) -> str:
    """A process's command, short: the program, or the module of `python -m`, or what Ray and MLflow name it."""
    words = command.split()
    if not words:
        return "?"
    for marker in ("-m", "-c"):
        if marker in words[:3] and words.index(marker) + 1 < len(words):
            target = words[words.index(marker) + 1]
            return (
                f"python -m {target}"
                if marker == "-m"
                else f"python -c {' '.join(words[words.index(marker) + 1 :])[:50]}"
            )
    program = Path(words[0]).name
    if program.startswith("python") and len(words) > 1:
        return f"python {Path(words[1]).name}"
    return program[:40]


def cpu_by_command(seen: dict[tuple[int, str], Sampled]) -> str:
    """CPU-s and counts of the tests' processes by kind of command, most first (markdown)."""
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for process in seen.values():
        if not is_worker(process.command):
            row = table[command_kind(process.command)]
            row[0] += process.cpu_s
            row[1] += 1
    lines = ["| command | processes | CPU-s |", "|---|---|---|"]
    for kind, (cpu, count) in sorted(table.items(), key=lambda item: -item[1][0])[:25]:
        lines.append(f"| `{kind}` | {int(count)} | {cpu:.0f} |")
    return "\n".join(lines)


def become_subreaper() -> None:
    """Orphans of the command's processes (a killed sweep driver's workers, daemons) are re-parented to this process,
    not to init, so the sampler still knows them as the command's (prctl(2), PR_SET_CHILD_SUBREAPER = 36)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1)


def reap_orphans(keep: int) -> None:
    """Collect the orphans that ended (they are this process's children now), never the command itself, whose exit
    status `subprocess` reads."""
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None or found.si_pid == keep:
            return
        os.waitpid(found.si_pid, 0)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _current_test(pid: int) -> str:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return ""
    for entry in environ:
        if entry.startswith(b"PYTEST_CURRENT_TEST="):
            return entry.split(b"=", 1)[1].decode(errors="replace").split(" ")[0]
    return ""


def busy_cpu_s() -> float:
    """The machine's busy CPU seconds so far, all cores (proc(5), /proc/stat: every column but idle and iowait)."""
    columns = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(columns) - columns[3] - columns[4]) / TICK


def is_worker(command: str) -> bool:
    """A pytest-xdist worker (execnet starts it with `-c import sys;exec(eval(sys.stdin.readline()))`)."""
    return "exec(eval(sys.stdin.readline()))" in command


def worker_cpu_by_file(log_dir: Path) -> dict[str, tuple[float, int]]:
    """File -> (the workers' own CPU seconds in its tests, number of tests), from the per-test logs."""
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for log in log_dir.glob("*.tsv"):
        for line in log.read_text().splitlines():
            test, own, *_ = line.split("\t")
            row = table[test.split("::", 1)[0]]
            row[0] += float(own)
            row[1] += 1
    return {name: (cpu, int(count)) for name, (cpu, count) in table.items()}


def process_cpu_by_file(seen: dict[tuple[int, str], Sampled]) -> dict[str, tuple[float, int]]:
    """File -> (CPU seconds of the processes its tests started, how many), workers left out."""
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for process in seen.values():
        if process.test and not is_worker(process.command):
            row = table[process.test.split("::", 1)[0]]
            row[0] += process.cpu_s
            row[1] += 1
    return {name: (cpu, int(count)) for name, (cpu, count) in table.items()}


def per_test_tsv(log_dir: Path, seen: dict[tuple[int, str], Sampled]) -> str:
    """One line per test, most CPU first: the test, its worker's own CPU-s, its processes' CPU-s."""
    own: dict[str, float] = defaultdict(float)
    started: dict[str, float] = defaultdict(float)
    for log in log_dir.glob("*.tsv"):
        for line in log.read_text().splitlines():
            test, cpu, *_ = line.split("\t")
            own[test] += float(cpu)
    for process in seen.values():
        if process.test and not is_worker(process.command):
            started[process.test] += process.cpu_s
    tests = sorted(set(own) | set(started), key=lambda t: -(own[t] + started[t]))
    return "".join(f"{t}\t{own[t]:.1f}\t{started[t]:.1f}\n" for t in tests)


def markdown_table(workers: dict[str, tuple[float, int]], processes: dict[str, tuple[float, int]], top: int) -> str:
    """The files by CPU, most first: tests, the workers' own CPU, the processes' and their number, the sum."""
    files = set(workers) | set(processes)
    rows = sorted(
        ((workers.get(f, (0.0, 0)), processes.get(f, (0.0, 0)), f) for f in files),
        key=lambda row: -(row[0][0] + row[1][0]),
    )
    lines = ["| file | tests | worker CPU-s | processes (CPU-s) | total CPU-s |", "|---|---|---|---|---|"]
    for (own, tests), (started, count), name in rows[:top]:
        lines.append(f"| `{name}` | {tests} | {own:.0f} | {count} ({started:.0f}) | {own + started:.0f} |")
    rest = rows[top:]
    if rest:
        lines.append(
            f"| {len(rest)} other files | {sum(r[0][1] for r in rest)} | {sum(r[0][0] for r in rest):.0f} | "
            f"{sum(r[1][1] for r in rest)} ({sum(r[1][0] for r in rest):.0f}) | "
            f"{sum(r[0][0] + r[1][0] for r in rest):.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--top", type=int, default=25, help="files listed one by one (default 25)")
    parser.add_argument("--per-test", type=Path, help="also write every test's CPU here (TSV: test, worker, processes)")
    parser.add_argument("command", nargs="*", default=["make", "test"], help="what to run (default: make test)")
    args = parser.parse_args(argv)
    log_dir = Path(tempfile.mkdtemp(prefix="prism-test-cpu-"))
    sampler = Sampler()
    thread = threading.Thread(target=sampler.run, daemon=True)
    become_subreaper()
    busy, started = busy_cpu_s(), time.monotonic()
    thread.start()
    command = subprocess.Popen(args.command, env=os.environ | {"PRISM_TEST_CPU_LOG": str(log_dir)})
    while (code := command.poll()) is None:
        reap_orphans(keep=command.pid)
        time.sleep(1)
    sampler.stop()
    thread.join()
    reap_orphans(keep=0)
    busy, wall = busy_cpu_s() - busy, time.monotonic() - started
    attribute_forked(sampler.seen, log_dir)
    workers, processes = worker_cpu_by_file(log_dir), process_cpu_by_file(sampler.seen)
    worker_total = sum(p.cpu_s for p in sampler.seen.values() if is_worker(p.command))
    print(
        f"\n{' '.join(args.command)}: exit {code}, {wall:.0f} s wall; the machine busy {busy:.0f} CPU-s",
        file=sys.stderr,
    )
    print(f"pytest workers {worker_total:.0f} CPU-s (in their tests {sum(c for c, _ in workers.values()):.0f}); "
          f"processes the tests started {sum(c for c, _ in processes.values()):.0f} CPU-s\n")  # fmt: skip
    print(markdown_table(workers, processes, args.top))
    print("\n" + cpu_by_command(sampler.seen))
    if args.per_test:
        args.per_test.write_text(per_test_tsv(log_dir, sampler.seen))
    return code


if __name__ == "__main__":
    sys.exit(main())
