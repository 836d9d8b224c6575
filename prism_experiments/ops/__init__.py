"""Operations: the servers and clusters the project starts on 127.0.0.1 and stops by PID (the tracking server,
a Ray head and its nodes, a local SLURM, the MLflow UI), the processes and signals of sweeps, and which runs are
still alive.

Every background server shares one command line (`cli.py`: start / stop / status) and one state file
(`state.py`); the MLflow UI (`ui.py`) runs in the foreground until Ctrl-C."""
