"""The slurm.conf and cgroup.conf of the local SLURM (`ops/slurm_local.py`): one node, `localhost`, on 127.0.0.1.
Why each setting: that module's docstring and docs/cluster.md "SLURM on one machine"."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

NODE = "localhost"
PARTITION = "local"
#: a higher-priority partition on the same node: its jobs preempt (requeue) the sweep jobs of PARTITION
URGENT_PARTITION = "urgent"


def node_memory_mb() -> int:
    """The machine's memory in MB (slurm.conf's RealMemory), from /proc/meminfo."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return max(1, int(line.split()[1]) // 1024)
    return 1


def slurm_conf(home: Path, runtime: Path, ctld_port: int, slurmd_port: int, cpus: int) -> str:
    user = pwd.getpwuid(os.geteuid()).pw_name
    settings = {
        "ClusterName": "prism-local",
        "SlurmctldHost": f"{NODE}(127.0.0.1)",
        "SlurmctldPort": ctld_port,
        "SlurmdPort": slurmd_port,
        "SlurmUser": user,
        "SlurmdUser": user,
        "AuthType": "auth/munge",
        "CredType": "cred/munge",
        # cred_expire: a requeued (preempted) job waits this long before it may start again (120 s by default)
        "AuthInfo": f"socket={runtime / 'munge.socket'},cred_expire=30",
        "StateSaveLocation": home / "state",
        "SlurmdSpoolDir": runtime / "spool",
        "SlurmctldPidFile": runtime / "slurmctld.pid",
        "SlurmdPidFile": runtime / "slurmd.pid",
        "ProctrackType": "proctrack/linuxproc",
        "TaskPlugin": "task/none",
        "JobAcctGatherType": "jobacct_gather/none",
        "AccountingStorageType": "accounting_storage/none",
        "JobCompType": "jobcomp/none",
        "SelectType": "select/cons_tres",
        "SelectTypeParameters": "CR_CPU",
        "SchedulerType": "sched/backfill",
        "MpiDefault": "none",
        "SwitchType": "switch/none",
        "MailProg": "/bin/true",
        "ReturnToService": 2,
        "SlurmdParameters": "config_overrides",
        "KillWait": 10,
        "CommunicationParameters": "NoCtldInAddrAny,NoInAddrAny",
        "PreemptType": "preempt/partition_prio",
        "PreemptMode": "REQUEUE",
    }
    lines = ["# written by `make slurm-local` (prism_experiments/ops/slurm_local.py); rewritten at each start"]
    lines += [f"{key}={value}" for key, value in settings.items()]
    lines += [
        f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={node_memory_mb()} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP PriorityTier=1",
        f"PartitionName={URGENT_PARTITION} Nodes={NODE} MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF",
    ]
    return "\n".join(lines) + "\n"


#: no cgroup plugin is configured (proctrack/linuxproc, task/none); slurmd still reads this file, and must not
#: mount cgroup filesystems of its own
CGROUP_CONF = "# written by `make slurm-local`: no cgroup plugin is used\nCgroupAutomount=no\n"
