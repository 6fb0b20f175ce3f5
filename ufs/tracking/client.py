"""The MLflow client and its errors (from ``ufs.bench.tracking``): tracking URIs,
the client, and the retry of a pass on a locked SQLite store. Imported first by every
module of :mod:`ufs.tracking`: it sets MLflow's HTTP environment defaults before MLflow
is imported (fail fast when a server is down; see :mod:`ufs.tracking.runs`)."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

#: MLflow's environment defaults of this project (unless set): fail fast instead of
#: MLflow's default minutes of retries when a server is down; and no "View run <name> at
#: <url>" line for every run MLflow ends against a server (hundreds per logging job: the
#: workflow prints the runs table's link once instead)
MLFLOW_ENV_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


# At import, as defaults (``setdefault``). A job forked from a warm server gets them the
# same way: the server records what the project's import sets and each child sets it again
# on its client's environment (``workflow/scripts/_warm.py``, ``_PROJECT_ENV``).
for _name, _value in MLFLOW_ENV_DEFAULTS.items():
    os.environ.setdefault(_name, _value)


#: experiment tag naming the store (see the module docstring)
STORE_TAG = "ufs_bench.store_id"


#: experiment tag MLflow 3 reads to choose the experiment's landing page: the runs table
#: (``custom_model_development``), not the GenAI overview (``genai_development``)
EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")


#: attempts of a pass that failed with ``database is locked`` (backoff 1, 2, 4, 8, 16 s)
LOCKED_RETRIES = 6


class TrackingError(RuntimeError):
    """The tracking store cannot be reached or is not initialised."""


def default_tracking_uri(output_dir: str | Path) -> str:
    return f"sqlite:///{Path(output_dir).resolve() / 'mlflow.db'}"


def resolve_uri(uri: str) -> str:
    """``uri`` with a relative SQLite path made absolute (relative to the working
    directory). The workflow's rule parameters hold the URI as configured (for the default
    store, relative to the working directory), so that moving the project changes no
    parameter and re-runs nothing; the jobs resolve it."""
    db = _sqlite_path(uri)
    if db is None or db.is_absolute():
        return uri
    query = uri.split("?", 1)[1] if "?" in uri else ""
    return f"sqlite:///{db.resolve()}" + (f"?{query}" if query else "")


def _sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (``None``: not a SQLite file store)."""
    prefix = "sqlite:///"
    if not uri.lower().startswith(prefix):
        return None
    path = uri[len(prefix) :].split("?", 1)[0]
    if not path or path == ":memory:":
        return None
    return Path(path)


def default_artifact_root(uri: str) -> str | None:
    """Artifacts of a SQLite store live beside it (``<dir>/mlflow-artifacts``), so that
    output directories sharing a store do not write into each other; a server keeps
    them itself (``None``)."""
    db = _sqlite_path(uri)
    return None if db is None else str(db.resolve().parent / "mlflow-artifacts")


#: the local SQLite stores whose connections commit without waiting for the disk
_UNSYNCED: set[str] = set()


def _unsynced_connect(dbapi_connection, connection_record) -> None:
    """SQLAlchemy ``connect`` listener: ``PRAGMA synchronous = OFF`` on a connection to a
    store of :data:`_UNSYNCED` (:func:`_client`)."""
    import sqlite3

    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    rows = dbapi_connection.execute("PRAGMA database_list").fetchall()
    files = {os.path.realpath(r[2]) for r in rows if r[1] == "main" and r[2]}
    if files & _UNSYNCED:
        dbapi_connection.execute("PRAGMA synchronous = OFF")


def _client(uri: str):
    """An ``MlflowClient`` of ``uri``. A local SQLite store is written with ``PRAGMA
    synchronous = OFF``: SQLite hands each commit to the operating system
    without waiting for the disk (fsync). A process that is killed loses nothing; an
    operating-system crash or a power cut while runs are logged can damage the store, which
    the next run's ``mlflow_init`` finds (``PRAGMA quick_check``, :func:`store_problem`),
    moves aside and rebuilds from the results files, the store's source of truth. The
    logging of a data set's runs (~1 000 commits) then takes its CPU time instead of
    3-4 times as long waiting for the disk (digits: 16.0 s -> 4.6 s of wall time, 4.8 ->
    3.6 CPU-s), while it holds one of the run's cores."""
    from mlflow.tracking import MlflowClient

    db = _sqlite_path(uri)
    if db is not None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        _UNSYNCED.add(os.path.realpath(db))
        if not event.contains(Engine, "connect", _unsynced_connect):
            event.listen(Engine, "connect", _unsynced_connect)
    return MlflowClient(tracking_uri=uri)


def _is_server(uri: str) -> bool:
    """A tracking server (REST API), as opposed to a store the client opens itself."""
    return uri.split(":", 1)[0].lower() in ("http", "https")


def _chain(exc: BaseException):
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _unreachable(exc: BaseException) -> bool:
    """The server could not be reached at all (refused, timed out, reset, DNS)."""
    import requests

    if any(
        isinstance(e, requests.exceptions.ConnectionError | requests.exceptions.Timeout)
        for e in _chain(exc)
    ):
        return True
    # a server killed mid-request: the client sees the connection dropped, often only in
    # the text of the MlflowException that wraps it
    markers = (
        "Max retries exceeded",
        "Connection refused",
        "Failed to establish",
        "timed out",
        "Connection aborted",
        "RemoteDisconnected",
        "Connection reset",
    )
    return any(s in str(e) for e in _chain(exc) for s in markers)


def _locked(exc: BaseException) -> bool:
    """SQLite's ``database is locked`` (another writer held the lock past the timeout)."""
    return any("database is locked" in str(e) for e in _chain(exc))


_sleep = time.sleep  # the backoff's sleep (tests replace it)


def _retry_locked(fn):
    """``fn()``, retried with exponential backoff (1, 2, 4, ... s, ±25 %) while it fails
    with ``database is locked``, at most :data:`LOCKED_RETRIES` attempts; ``fn`` must be
    idempotent. Any other error, or the last one, propagates."""
    for attempt in range(LOCKED_RETRIES):
        try:
            return fn()
        except Exception as exc:
            if not _locked(exc) or attempt == LOCKED_RETRIES - 1:
                raise
            delay = 2.0**attempt * random.uniform(0.75, 1.25)
            print(
                f"MLflow store busy (database is locked), attempt {attempt + 1} of "
                f"{LOCKED_RETRIES}; retrying in {delay:.1f} s",
                file=sys.stderr,
            )
            _sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _wrap(uri: str, what: str, exc: Exception) -> TrackingError:
    hint = ""
    if _is_server(uri) and _unreachable(exc):
        hint = (
            f"Cannot reach the MLflow tracking server at {uri}: is `mlflow server` running "
            "there (see docs/guide/mlflow-server.md)? "
        )
    return TrackingError(
        f"{hint}MLflow tracking store {uri!r} failed while {what}: {type(exc).__name__}: "
        f"{exc}. The results files are intact; start the store (or fix "
        "mlflow.tracking_uri) and re-run the workflow to log exactly the missing runs."
    )


def _search(client, exp_id: str, filter_string: str) -> list:
    from mlflow.entities import ViewType

    runs: list = []
    token = None
    while True:
        page = client.search_runs(
            [exp_id],
            filter_string=filter_string,
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=1000,
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs
