"""A content-addressed cache of model answers under the runs dir: re-runs and other conditions replay for free.

key = sha256(model identity, full prompt, JSON schema, sampling parameters, sampling seed); one JSON file
per answer, written atomically (temp file + rename), so an interrupted run keeps every answer it got.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from prism_experiments.llm.chat import ChatRequest, ChatResponse


def request_key(identity: str, request: ChatRequest) -> str:
    """The cache key of `request` asked of the model `identity`."""
    payload = {
        "model": identity,
        "messages": list(request.messages),
        "schema": request.schema,
        "max_new_tokens": request.max_new_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    """Answers on disk, one file per key under `directory/<2 hex>/<key>.json`."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        """The stored answer, or None (also for a file that is not a whole answer)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return ChatResponse(**data)
        except (OSError, ValueError, TypeError):
            return None

    def put(self, key: str, response: ChatResponse) -> None:
        """Store atomically: readers see the old state or the whole new file, never half of it."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(asdict(response), handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
