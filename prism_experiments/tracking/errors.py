"""One readable line for an exception, for logs and the sweep's failure list."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit

#: MLflow's REST client's message when a request got no usable answer (mlflow/utils/rest_utils.py `http_request`)
_REQUEST_FAILED = re.compile(r"API request to (?P<url>\S+) failed with exception (?P<detail>.+)", re.DOTALL)
#: where the full text of a shortened error goes: the job's log file (conf/config.yaml `hydra.job_logging`)
detail_log = logging.getLogger("prism_experiments.detail")


def error_line(error: BaseException, store: str | None = None) -> str:
    """`Type: message` with the message of the innermost cause, first line only; a tracking store that gave no
    answer is "tracking store unreachable: <host:port> (<cause>)", its full text logged to `detail_log`
    (`store`: the tracking URI the failed call went to, named when MLflow's error does not say).

    MLflow wraps a sqlite error in SQLAlchemy's, whose first line is advice about autoflush; the cause
    at the bottom of the chain ("database or disk is full") is what a user can act on.
    """
    unreachable = _REQUEST_FAILED.match(str(error))
    if unreachable is not None:
        detail_log.debug("%s: %s", type(error).__name__, error)
        return f"tracking store unreachable: {_host(unreachable['url'])} ({short_cause(unreachable['detail'])})"
    if getattr(error, "error_code", None) == _STORE_UNAVAILABLE:
        detail_log.debug("%s: %s", type(error).__name__, error)
        where = _host(store) if store else "the tracking server"
        return f"tracking store unreachable: {where} (HTTP 503: the server's database is unavailable)"
    root = error
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    lines = [line for line in str(root).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0].strip()}" if lines else type(error).__name__


#: the error code of an MLflow server's answer when its database is down (HTTP 503, mlflow/store/db/utils.py); from
#: MLflow 3.18 a write that is not safe to repeat (creating a run) gets it at once, not "too many 503 error responses"
_STORE_UNAVAILABLE = "TEMPORARILY_UNAVAILABLE"


def _host(url: str) -> str:
    """`host:port` of a URL (no user or password)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname or url)


def short_cause(detail: str) -> str:
    """A few words for urllib3's account of a failed request (its text runs to 300 characters)."""
    if timeout := re.search(r"[Rr]ead timed out\. \(read timeout=([\d.]+)\)", detail):
        return f"no answer within {float(timeout[1]):g} s"
    if "Connection refused" in detail:
        return "connection refused"
    if status := re.search(r"too many (\d{3}) error responses", detail):
        return f"HTTP {status[1]} to every attempt"
    if "RemoteDisconnected" in detail or "Connection aborted" in detail:
        return "the server closed the connection"
    if "Name or service not known" in detail or "NameResolutionError" in detail:
        return "unknown host"
    first = detail.strip().splitlines()[0] if detail.strip() else "no detail"
    return first if len(first) <= 80 else f"{first[:77]}..."


class ShortRetryWarnings(logging.Filter):
    """urllib3's "Retrying (Retry(total=1, ...)) after connection broken by '<300 characters>': <path>" warning,
    shortened to the host and the cause; the full text goes to `detail_log`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Retrying") or len(record.args or ()) != 3:
            return True
        retries, error, _ = record.args  # type: ignore[misc]
        text = str(error)
        host = re.search(r"host='([^']+)', port=(\d+)", text)
        detail_log.debug(record.getMessage())
        record.msg, record.args = (
            "tracking store %s: %s; retrying (%s left)",
            (
                f"{host[1]}:{host[2]}" if host else "?",
                short_cause(text),
                _left(retries),
            ),
        )
        return True


def _left(retries: Any) -> str:
    total = getattr(retries, "total", None)
    return str(total) if isinstance(total, int) else "some"


def shorten_retry_warnings() -> None:
    """Install `ShortRetryWarnings` on urllib3's connection-pool logger (once per process)."""
    pool_logger = logging.getLogger("urllib3.connectionpool")
    if not any(isinstance(f, ShortRetryWarnings) for f in pool_logger.filters):
        pool_logger.addFilter(ShortRetryWarnings())
