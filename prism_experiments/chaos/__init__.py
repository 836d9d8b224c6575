"""`make chaos`: sweeps on every launcher and store under random faults, and the invariants they must keep.

A seeded schedule (`schedule.py`) of rounds; each round starts 1-3 sweeps and injects one fault (`faults.py`) when
an event happens (the sweep's parent run exists, a job runs, a job finished); then the next command (a sweep of the
round's jobs) runs, and the invariants are checked (`invariants.py`). docs/model.md, "Faults and recovery".
"""
