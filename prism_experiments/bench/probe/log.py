"""Reading the probe's event lines back into counts."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProbeSummary:
    processes: int  # processes that logged at least one event
    model_loads: int
    model_load_s: float
    encoded_texts: int  # texts sent to the model, counting repeats
    distinct_encoded: int
    index_builds: int  # first add_posts of each store: the base corpus index
    index_build_s: float
    distinct_corpora: int
    same_corpus_rebuilds: int  # index builds of a corpus the same process had already indexed

    @property
    def duplicate_encodes(self) -> int:
        """Texts the model encoded more than once (in any processes)."""
        return self.encoded_texts - self.distinct_encoded


def read_probe(log_dir: Path) -> ProbeSummary:
    events = []
    for path in sorted(Path(log_dir).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                events.append(json.loads(line))
    loads = [e for e in events if e["event"] == "model_load"]
    encodes = [e for e in events if e["event"] == "encode"]
    builds = [e for e in events if e["event"] == "index_build"]
    per_process = Counter((e["pid"], e["corpus"]) for e in builds)
    return ProbeSummary(
        processes=len({e["pid"] for e in events}),
        model_loads=len(loads),
        model_load_s=sum(e["seconds"] for e in loads),
        encoded_texts=sum(e["n"] for e in encodes),
        distinct_encoded=len({d for e in encodes for d in e["digests"]}),
        index_builds=len(builds),
        index_build_s=sum(e["seconds"] for e in builds),
        distinct_corpora=len({e["corpus"] for e in builds}),
        same_corpus_rebuilds=sum(count - 1 for count in per_process.values()),
    )
