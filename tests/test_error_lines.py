"""A tracking store that gives no answer is one short line naming the store and the cause, not urllib3's text; the
full text goes to the job's log file (`prism_experiments.detail`)."""

from __future__ import annotations

import logging

import pytest
from mlflow.exceptions import MlflowException
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from prism_experiments.tracking.errors import ShortRetryWarnings, error_line

#: MLflow's message for a request to a server whose database is down (seen with PostgreSQL killed), 312 characters
TIMED_OUT = (
    "API request to http://127.0.0.1:36049/api/2.0/mlflow/experiments/get-by-name failed with exception "
    "HTTPConnectionPool(host='127.0.0.1', port=36049): Max retries exceeded with url: "
    '/api/2.0/mlflow/experiments/get-by-name?experiment_name=smoke (Caused by ReadTimeoutError("HTTPConnectionPool('
    "host='127.0.0.1', port=36049): Read timed out. (read timeout=10)\"))"
)


@pytest.mark.parametrize(
    "message, line",
    [
        (TIMED_OUT, "tracking store unreachable: 127.0.0.1:36049 (no answer within 10 s)"),
        (
            "API request to http://u:secret@db.lab:5000/api/2.0/mlflow/runs/get failed with exception "
            "HTTPConnectionPool(host='db.lab', port=5000): Max retries exceeded with url: /api/2.0/mlflow/runs/get "
            "(Caused by ResponseError('too many 503 error responses'))",
            "tracking store unreachable: db.lab:5000 (HTTP 503 to every attempt)",
        ),
        (
            "API request to http://127.0.0.1:5077/api/2.0/mlflow/runs/create failed with exception "
            "HTTPConnectionPool(host='127.0.0.1', port=5077): Max retries exceeded with url: "
            "/api/2.0/mlflow/runs/create "
            "(Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a "
            "new connection: [Errno 111] Connection refused'))",
            "tracking store unreachable: 127.0.0.1:5077 (connection refused)",
        ),
    ],
    ids=["timed-out", "503", "refused"],
)
def test_an_unreachable_store_is_one_short_line_with_the_detail_in_the_log(
    message: str, line: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="prism_experiments.detail"):
        assert error_line(MlflowException(message)) == line
    assert "secret" not in line
    assert [record.getMessage() for record in caplog.records] == [f"MlflowException: {message}"]


def test_a_server_whose_database_is_down_is_named_by_the_tracking_uri(caplog: pytest.LogCaptureFixture) -> None:
    """From MLflow 3.18 a run's creation is not retried on HTTP 503: the server's own error arrives as a
    RestException, with no URL in it (seen with PostgreSQL killed under `make tracking-server`)."""
    from mlflow.exceptions import RestException

    error = RestException(
        {
            "error_code": "TEMPORARILY_UNAVAILABLE",
            "message": '(psycopg.OperationalError) connection failed: connection to server at "127.0.0.1", '
            "port 42993 failed: Connection refused",
        }
    )
    with caplog.at_level(logging.DEBUG, logger="prism_experiments.detail"):
        line = error_line(error, store="http://u:secret@127.0.0.1:48251")
    assert line == "tracking store unreachable: 127.0.0.1:48251 (HTTP 503: the server's database is unavailable)"
    assert error_line(error).startswith("tracking store unreachable: the tracking server (HTTP 503")
    assert [record.getMessage().split(":")[0] for record in caplog.records] == ["RestException"]
    other = RestException({"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Run 'abc' not found"})
    assert error_line(other) == "RestException: RESOURCE_DOES_NOT_EXIST: Run 'abc' not found"


def test_other_errors_keep_their_innermost_cause() -> None:
    try:
        try:
            raise OSError("database or disk is full")
        except OSError as cause:
            raise RuntimeError("(sqlite3.OperationalError) autoflush advice\nmore") from cause
    except RuntimeError as error:
        assert error_line(error) == "RuntimeError: database or disk is full"


def test_urllib3_retry_warnings_are_shortened_to_the_store_and_the_cause() -> None:
    """The record urllib3's connection pool logs before it retries (urllib3/connectionpool.py `urlopen`)."""
    error = ReadTimeoutError(None, "/api", "Read timed out. (read timeout=10)")  # type: ignore[arg-type]
    error.args = ("HTTPConnectionPool(host='127.0.0.1', port=36049): Read timed out. (read timeout=10)",)
    record = logging.LogRecord(
        "urllib3.connectionpool",
        logging.WARNING,
        __file__,
        1,
        "Retrying (%r) after connection broken by '%r': %s",
        (Retry(total=1), error, "/api/2.0/mlflow/experiments/get-by-name"),
        None,
    )
    assert ShortRetryWarnings().filter(record)
    assert record.getMessage() == "tracking store 127.0.0.1:36049: no answer within 10 s; retrying (1 left)"
