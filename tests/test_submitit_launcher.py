"""The submitit-local launcher's own stop: a job that ignores SIGTERM does not outlive an interrupted sweep."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import submitit

from hydra_plugins.prism_launcher.prism_submitit_launcher import stop_local_jobs
from prism_experiments.ops.processes import process_alive

#: a job still in submitit's start-up, where SIGTERM is only logged: here it ignores SIGTERM for good
DEAF_JOB = (
    "import os, signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "open({path!r}, 'w').write(str(os.getpid()))\n"  # once deaf: a SIGTERM sent on seeing the file finds it so
    "time.sleep(600)\n"
)


def test_a_local_job_deaf_to_the_forwarded_sigterm_is_cancelled_after_the_grace(tmp_path: Path) -> None:
    executor = submitit.LocalExecutor(folder=tmp_path / "submitit")
    executor.update_parameters(timeout_min=10)
    pid_file = tmp_path / "job.pid"
    job = executor.submit(exec, DEAF_JOB.format(path=str(pid_file)))
    deadline = time.monotonic() + 120
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and job._process.poll() is None, "the job started"
        time.sleep(0.2)
    task = int(pid_file.read_text())
    try:
        os.kill(job._process.pid, signal.SIGTERM)  # what the interrupted driver passes on to its children
        time.sleep(1.0)
        assert process_alive(task), "the job ignored the forwarded SIGTERM"
        stop_local_jobs([job], grace_s=0.5)
        assert job._process.poll() is not None
        deadline = time.monotonic() + 10
        while process_alive(task) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not process_alive(task)
    finally:
        if process_alive(task):
            os.kill(task, signal.SIGKILL)
        job._process.kill()
