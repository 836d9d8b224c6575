"""Job states of a SLURM cluster for the `prism_submitit_slurm` launcher: `sacct` where the cluster keeps
accounting, else `squeue` (the local SLURM of `ops/slurm_local.py` keeps none)."""

from __future__ import annotations

import logging
import subprocess
import time

from submitit.slurm.slurm import SlurmInfoWatcher

log = logging.getLogger(__name__)

#: at most this many seconds between two questions to SLURM about a sweep's jobs (submitit's default: 600)
SLURM_STATE_SECONDS = 10
#: the state given to a job that `squeue` no longer knows (purged after SLURM's MinJobAge) and that left no result
NOT_IN_QUEUE = "ENDED (no longer in squeue)"


class SlurmStateWatcher(SlurmInfoWatcher):
    """submitit's job-state watcher for `prism_submitit_slurm`: `sacct` where the cluster keeps accounting (as
    submitit does), else `squeue --states=all`. Without slurmdbd `sacct` fails, and submitit would keep a job that
    died without a result (`scancel`, a time limit) UNKNOWN, so the sweep would wait for it forever."""

    def __init__(self, delay_s: int = SLURM_STATE_SECONDS) -> None:
        super().__init__(delay_s=delay_s)
        self.accounting: bool | None = None  # unknown until sacct was asked once

    def update(self) -> None:
        command = self._make_command()
        if command is None:
            return
        self._num_calls += 1
        output = self._sacct(command) if self.accounting is not False else None
        if self.accounting is False:
            output = self._squeue(sorted({job_id.split("_")[0] for job_id in self._registered - self._finished}))
        if output is not None:
            self._info_dict.update(self.read_info(output))
        self._last_status_check = time.time()
        for job_id in self._registered - self._finished:
            if self.is_done(job_id, mode="cache"):
                self._finished.add(job_id)

    def _sacct(self, command: list[str]) -> str | None:
        done = _ask(command)
        if done is None:
            return None
        if done.returncode == 0:
            self.accounting = True
            return done.stdout
        if "accounting storage is disabled" in done.stderr:
            self.accounting = False
            log.info("this SLURM cluster keeps no accounting (sacct): job states come from squeue")
            return None
        log.warning("sacct: %s; job states may lag", (done.stderr.strip() or f"exit {done.returncode}")[:200])
        return None

    def _squeue(self, main_ids: list[str]) -> str | None:
        """`sacct --parsable2`'s format from `squeue`; a registered job squeue no longer knows is NOT_IN_QUEUE."""
        done = _ask(
            ["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T|%N", "--jobs", ",".join(main_ids)]
        )
        if done is None:
            return None
        if done.returncode != 0 and "Invalid job id" not in done.stderr:
            log.warning("squeue: %s; job states may lag", (done.stderr.strip() or f"exit {done.returncode}")[:200])
            return None
        lines = done.stdout.splitlines() if done.returncode == 0 else []
        listed = {line.split("|", 1)[0] for line in lines}
        lines += [
            f"{job_id}|{NOT_IN_QUEUE}|"
            for job_id in sorted(self._registered - self._finished)
            if job_id not in listed and job_id.split("_")[0] not in listed
        ]
        return "\n".join(["JobID|State|NodeList", *lines])


def _ask(command: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("%s: %s; job states may lag", command[0], error)
        return None
