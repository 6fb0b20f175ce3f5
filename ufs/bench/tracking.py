"""MLflow logging: one run per (output directory, data, dataset, method, setting, h).

Design (DESIGN §6):

* The store and the experiment are created once, by :func:`init_experiment`, before
  any logging job runs (many processes creating a SQLite store or an experiment at once
  corrupt it or silently log into "Default"). Logging jobs look the experiment up by
  name and fail clearly if it does not exist.
* A local SQLite store is created atomically: built and migrated at a temporary path
  beside it (``mlflow.db.tmp-<pid>-<random>``), then renamed onto ``mlflow.db``, under an
  exclusive lock on its directory (concurrent workflows on one store). A killed or failed
  creation leaves no ``mlflow.db`` (its temporary file is removed by the next creation).
  An existing store that fails the health check (:func:`store_problem`: unreadable,
  ``PRAGMA quick_check``, tables of an interrupted migration, missing tables, schema not at
  this MLflow's head) is moved aside to ``mlflow.db.broken-<time>`` with a WARNING naming it,
  and rebuilt; the results files then log every run again.
* Store identity: the experiment carries a tag ``ufs_bench.store_id``, and every receipt
  (``<out>/mlflow/experiment.json``, ``<out>/mlflow/<dataset>.json``) records it. At
  planning time :func:`planned_store_id` reads the store (read-only, no MLflow import);
  when it is missing, damaged, or its experiment is missing or untagged, it returns a new
  id (deterministic, so every process of one run agrees), a rule parameter of the
  ``mlflow_init`` and ``track`` jobs: they re-run, and no receipt claims runs in a store
  that was rebuilt.
* Run keys identify the output directory (its :func:`output_identity`, recorded in the
  directory and moving with it) and the data (:func:`data_sha256` of the standardized data)
  besides the setting (:func:`setting_key`), so several output directories can share one
  store, and a moved directory finds its runs (issue 26 #4; :func:`init_experiment` points a
  moved SQLite store at its artifacts' new place). A logging job only ever reads, replaces or deletes runs
  of its own output directory (tag ``output_id``) and dataset (in the directory's own store
  also the dataset's runs logged before runs carried that tag). A SQLite store keeps its
  artifacts beside it (:func:`default_artifact_root`), not in one of the directories.
* Idempotent: every run carries its ``run_key`` tag and a ``result_hash`` tag. A FINISHED
  run with the same key and hash is never logged again (its tags that differ from what the
  results say now, e.g. ``in_grid`` after a grid change, are set again); a run with the key that did not
  finish (a killed job) or that holds outdated results is deleted and logged afresh; runs
  of this output directory and dataset whose key is no longer in the results (e.g. the data
  changed) are deleted. Hence exactly one FINISHED run per key, and the store mirrors the
  results files.
* SQLite takes one writer at a time. MLflow waits up to 20 s for the lock (``busy_timeout``);
  beyond that, a ``database is locked`` error is retried a bounded number of times with
  exponential backoff (:data:`LOCKED_RETRIES`), the whole pass at once (it is idempotent).
* Results files are the source of truth; MLflow is an index for browsing.
* Browsing: runs are named ``<dataset>/<method>/h=<h>/<setting>`` (:func:`run_name`), the
  informative part first because the runs table cuts names at its column width; the name is
  unique in the experiment (a directory logging into a store that is not its own adds
  ``@<directory name>:<output id>``) and a run kept from an earlier pass is renamed when
  the rule changed. The experiment is tagged ``mlflow.experimentKind =
  custom_model_development`` (:data:`EXPERIMENT_KIND`): MLflow 3 UIs that read the tag open
  it on the runs table instead of the GenAI overview; MLflow 3.17's UI ignores it and
  follows its browser-wide GenAI / Model training switch, so :func:`init_experiment`'s
  receipt and the docs give the runs table's link with ``?workflowType=machine_learning``.
* Against a tracking server (``http(s)://``, docs/mlflow_server.md) the server owns the
  artifact store: experiments are created without a client-side artifact location, so
  artifacts are uploaded through the server (``mlflow-artifacts:/``) and not written to
  a path only this machine can see. HTTP requests fail fast (see the environment
  defaults below) and errors name the server, so a down server costs seconds per job.
  A server's store is not inspected at planning time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..fileio import read_json, to_jsonable, write_json
from .io import read_evaluations

__all__ = [
    "init_experiment",
    "log_evaluations",
    "run_key",
    "setting_key",
    "data_sha256",
    "output_id",
    "planned_store_id",
    "store_problem",
    "default_artifact_root",
    "TrackingError",
    "default_tracking_uri",
    "STORE_TAG",
    "EXPERIMENT_KIND",
    "LOCKED_RETRIES",
    "run_name",
    "run_description",
    "setting_label",
    "runs_table_path",
]

# Fail fast instead of MLflow's default minutes of retries when a server is down.
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "20")
# Against a server MLflow prints "View run <name> at <url>" for every run it ends: hundreds of
# lines per logging job; the workflow prints the runs table's link once instead.
os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

#: experiment tag naming the store (see the module docstring)
STORE_TAG = "ufs_bench.store_id"
#: experiment tag MLflow 3 reads to choose the experiment's landing page: the runs table
#: (``custom_model_development``), not the GenAI overview (``genai_development``)
EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")
#: longest readable setting label (``k=v,...``) in a run name; longer: the keys abbreviated
SETTING_LABEL_MAX = 30
#: longest setting label with abbreviated keys; longer: the params id
ABBREVIATED_LABEL_MAX = 48
#: attempts of a pass that failed with ``database is locked`` (backoff 1, 2, 4, 8, 16 s)
LOCKED_RETRIES = 6
#: seconds to wait for another process creating or checking the same SQLite store
LOCK_TIMEOUT = 600.0
# tables any MLflow tracking store has (the full check uses MLflow's own list)
_CORE_TABLES = frozenset(
    {"alembic_version", "experiments", "experiment_tags", "runs", "tags", "params", "metrics"}
)


class TrackingError(RuntimeError):
    """The tracking store cannot be reached or is not initialised."""


def default_tracking_uri(output_dir: str | Path) -> str:
    return f"sqlite:///{Path(output_dir).resolve() / 'mlflow.db'}"


def resolve_uri(uri: str) -> str:
    """``uri`` with a relative SQLite path made absolute (relative to the working
    directory). The workflow's rule parameters hold the URI as configured (for the default
    store, relative to the working directory), so that moving the project changes no
    parameter and re-runs nothing (issue 26 #4); the jobs resolve it."""
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


def _client(uri: str):
    from mlflow.tracking import MlflowClient

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
            "there (see docs/mlflow_server.md)? "
        )
    return TrackingError(
        f"{hint}MLflow tracking store {uri!r} failed while {what}: {type(exc).__name__}: "
        f"{exc}. The results files are intact; start the store (or fix "
        "mlflow.tracking_uri) and re-run the workflow to log exactly the missing runs."
    )


# -- identity of the data, the output directory and the run ---------------------------------
def data_sha256(path: str | Path) -> str:
    """sha256 of the arrays of a data file (``.npz``): names, dtypes, shapes and bytes in
    name order; unlike the file's bytes it does not depend on when the file was written."""
    import numpy as np

    h = hashlib.sha256()
    with np.load(path, allow_pickle=False) as f:
        for name in sorted(f.files):
            a = np.ascontiguousarray(f[name])
            h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
            h.update(a.tobytes())
    return h.hexdigest()


#: the output directory's identity file (in its ``mlflow`` folder, beside the receipts)
IDENTITY_FILE = "mlflow/output_identity.json"


def output_identity(output_dir: str | Path, adopt: str | None = None) -> str:
    """The identity of an output directory: the resolved path where its identity file was
    first written (``<output_dir>/mlflow/output_identity.json``), which moves with the
    directory. Run keys and the ``output_id`` tag derive from it, so a moved or renamed
    directory (a moved project) finds its runs as they are (issue 26 #4); a directory that
    never had the file gets its current path, the identity run keys used before the file
    existed. A copy shares its original's identity: delete the copy's file to make it a
    directory of its own in a store both log to. ``adopt``: the identity to record when
    there is no file yet (:func:`_store_identity`: a directory moved with its own store
    before identities were recorded), instead of the current path."""
    out = Path(output_dir).resolve()
    path = out / IDENTITY_FILE
    if path.exists():
        identity = read_json(path).get("identity")
        if isinstance(identity, str) and identity:
            return identity
    identity = adopt or str(out)
    write_json(
        path,
        {
            "identity": identity,
            "note": "the identity of this output directory in MLflow stores; it moves with "
            "the directory (ufs.bench.tracking.output_identity)",
        },
    )
    return identity


def _store_identity(client, exp_id: str, out: Path) -> str | None:
    """For a directory with no identity file yet, logging into its own store: the
    ``output_dir`` every run of the store was logged from, when there is exactly one and
    it no longer exists (a directory moved, store and all, before identities were
    recorded: its runs are found instead of logged again beside themselves; a directory
    that exists is another one logging into this store). ``None`` otherwise."""
    if (out / IDENTITY_FILE).exists():
        return None
    dirs = {r.data.tags.get("output_dir") for r in _search(client, exp_id, "")}
    dirs.discard(None)
    if len(dirs) != 1:
        return None
    (old,) = dirs
    return old if old != str(out) and not Path(old).exists() else None


def output_id(output_dir: str | Path) -> str:
    """Short id of an output directory (of its :func:`output_identity`), a run tag."""
    return _id_of(output_identity(output_dir))


def _id_of(identity: str) -> str:
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def setting_key(
    dataset: str, method: str, pid: str, h_label: str, restarts: int, seed: int, nmi_average: str
) -> str:
    """The (dataset, method, setting, h, protocol) part of a run key: the same in every
    output directory (a run tag, ``setting_key``)."""
    blob = json.dumps([dataset, method, pid, h_label, restarts, seed, nmi_average])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_key(
    dataset: str,
    method: str,
    pid: str,
    h_label: str,
    restarts: int,
    seed: int,
    nmi_average: str,
    *,
    output_dir: str | Path,
    data_sha256: str,
) -> str:
    """A run's identity: the setting (:func:`setting_key`) in one output directory (its
    :func:`output_identity`) on one dataset content (:func:`data_sha256`)."""
    skey = setting_key(dataset, method, pid, h_label, restarts, seed, nmi_average)
    return _run_key_of(skey, output_identity(output_dir), data_sha256)


def _run_key_of(skey: str, identity: str, data_hash: str) -> str:
    """:func:`run_key` from the setting key and the output directory's identity."""
    blob = json.dumps([identity, data_hash, skey])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# -- what the UI shows: run names, the runs table's link ----------------------------------------
def _value_label(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, float):
        short = f"{v:g}"
        return short if float(short) == v else repr(v)
    if isinstance(v, int | str):
        return str(v)
    return json.dumps(to_jsonable(v), separators=(",", ":"), sort_keys=True)


def setting_label(params: dict[str, Any], pid: str) -> str:
    """A setting as run names show it: ``k=v,...`` (keys sorted) when at most
    :data:`SETTING_LABEL_MAX` characters, else the same with abbreviated keys
    (:func:`_key_abbrev`) when that takes at most :data:`ABBREVIATED_LABEL_MAX`, ``default``
    for a method without parameters, else the params id ``pid``."""
    if not params:
        return "default"
    label = ",".join(f"{k}={_value_label(v)}" for k, v in sorted(params.items()))
    if len(label) <= SETTING_LABEL_MAX:
        return label
    short = ",".join(f"{_key_abbrev(k)}={_value_label(v)}" for k, v in sorted(params.items()))
    return short if short != label and len(short) <= ABBREVIATED_LABEL_MAX else pid


def _key_abbrev(key: str) -> str:
    """A parameter name shortened for run names (the params columns keep it whole):
    the first three letters of its first word and the initials of the others
    (``n_neighbors`` -> ``nn``, ``max_iter`` -> ``maxi``, ``gamma`` -> ``gam``)."""
    first, *rest = [w for w in key.split("_") if w] or [key]
    return first[:3] + "".join(w[0] for w in rest)


def run_name(dataset: str, method: str, h_label: str, setting: str, suffix: str = "") -> str:
    """``<dataset>/<method>/h=<h>/<setting>[<suffix>]``: the runs table cuts names at its
    column's width (190 px, about 25 characters), so what tells runs apart comes first."""
    return f"{dataset}/{method}/h={h_label}/{setting}{suffix}"


def _run_names(runs: dict[str, dict[str, Any]], suffix: str) -> dict[str, str]:
    """Distinct names of one pass's runs, by run key (``runs``: run key -> its dataset,
    method, h_label, params, pid). A readable setting label shared by two runs (e.g. of
    ``1`` and ``1.0``) falls back to the params id; a name still shared gets the run key."""

    def name(key: str, level: int) -> str:
        c = runs[key]
        setting = setting_label(c["params"], c["pid"]) if level == 0 else c["pid"]
        if level == 2:
            setting += f"#{key}"
        return run_name(c["dataset"], c["method"], c["h_label"], setting, suffix)

    level = dict.fromkeys(runs, 0)
    for _ in range(2):
        names = {k: name(k, level[k]) for k in runs}
        counts = Counter(names.values())
        clash = [k for k in runs if counts[names[k]] > 1]
        if not clash:
            break
        for k in clash:
            level[k] += 1
    return {k: name(k, level[k]) for k in runs}


#: the view the runs-table link opens: a "shared view" the experiment stores in a tag
#: ``mlflow.sharedViewState.<key>`` (what the UI's own Share button writes, read by MLflow
#: 3.17's UI from ``viewStateShareKey`` in the link). Column keys are the UI's
#: ``<type>.`<name>```; sorted by ACC, best first, so the numbers come first.
SHARED_VIEW_KEY = "ufs-bench-v2"
SHARED_VIEW = {
    # issue 39: the full data set / method / h first (the name column cuts run names at
    # ~22 characters), sorted by data set (a sort by ACC across data sets put
    # golfs_sim2/max_variance first: a meaningless order); each data set x method is a
    # parent run that groups its settings' runs
    "selectedColumns": [
        "params.`dataset`",
        "params.`method`",
        "params.`h`",
        "tags.`protocol`",
        "metrics.`acc_mean`",
        "metrics.`nmi_mean`",
        "metrics.`ari_mean`",
        "metrics.`fit_seconds`",
        "tags.`selected_by_label_tuning`",
        "tags.`fit_status`",
        "tags.`role`",
    ],
    "orderByKey": "params.`dataset`",
    "orderByAsc": True,
}

#: significant digits of the metrics logged to MLflow (issue 39: 6+ digits); the
#: evaluation files keep full precision and stay the source of truth
METRIC_DIGITS = 4


def _rounded(v: float) -> float:
    return float(f"{float(v):.{METRIC_DIGITS}g}")


def runs_table_path(experiment_id: str) -> str:
    """The experiment's runs table in the MLflow UI (path after the server's address).
    ``workflowType=machine_learning`` makes MLflow 3.17's UI open the runs table: it picks
    the landing page from a browser-wide GenAI / Model training switch (default GenAI,
    whose overview shows "No data" here), not from the experiment's tags;
    ``viewStateShareKey`` opens it on :data:`SHARED_VIEW` (ACC, NMI, ARI, fit time, h and
    the protocol tags as columns), which the runs table otherwise hides."""
    return (
        f"/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
        f"&viewStateShareKey={SHARED_VIEW_KEY}"
    )


def runs_table_hint(receipt: str | Path) -> str | None:
    """``MLflow runs table: ...`` for the end of a run, from ``mlflow_init``'s receipt
    (the server's URL, or the ``mlflow ui`` command and the local URL); ``None`` when
    there is no readable receipt (tracking disabled or never initialised)."""
    try:
        r = read_json(receipt)
        uri, path = r["tracking_uri"], runs_table_path(r["experiment_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _is_server(uri):
        return f"MLflow runs table: {uri.rstrip('/')}{path}"
    return (
        f"MLflow runs table: run `mlflow ui --backend-store-uri {uri}`, then open "
        f"http://127.0.0.1:5000{path}"
    )


# -- the SQLite store: health, identity, atomic creation -------------------------------------
def _stat_id(path: Path) -> str:
    st = path.stat()
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _structure_problem(con: sqlite3.Connection, tables_needed) -> str | None:
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    leftover = sorted(t for t in tables if t.startswith("_alembic_tmp_"))
    if leftover:
        return f"an interrupted schema migration left the tables {leftover}"
    if "alembic_version" not in tables:
        return "no alembic_version table: its schema migration never completed"
    missing = sorted(set(tables_needed) - tables)
    if missing:
        return f"tables missing: {missing[:5]}{' ...' if len(missing) > 5 else ''}"
    revs = [r[0] for r in con.execute("SELECT version_num FROM alembic_version")]
    if len(revs) != 1:
        return f"alembic_version holds {len(revs)} rows, not one: its schema migration was cut"
    return None


def store_problem(db: str | Path) -> str | None:
    """Why the SQLite store ``db`` cannot be used (``None``: it is complete): not a SQLite
    file, ``PRAGMA quick_check`` fails, leftovers of an interrupted migration, missing
    tables, or a schema revision other than this MLflow's head. A revision this MLflow does
    not know (a store of a newer MLflow) raises :class:`TrackingError` instead: such a
    store is not ours to move aside."""
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401  (registers MLflow's tables)
    from mlflow.store.db import utils as dbu

    head = dbu._get_latest_schema_revision()
    try:
        con = sqlite3.connect(str(db), timeout=30)
        try:
            check = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
            if check != ["ok"]:
                return f"PRAGMA quick_check failed: {check[:3]}"
            problem = _structure_problem(con, dbu.Base.metadata.tables)
            if problem:
                return problem
            (rev,) = con.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise
        return f"unreadable: {exc}"
    except sqlite3.DatabaseError as exc:
        return f"not a SQLite database: {exc}"
    if rev != head:
        from alembic.script import ScriptDirectory
        from alembic.util import CommandError

        try:
            ScriptDirectory.from_config(dbu._get_alembic_config("")).get_revision(rev)
        except CommandError:
            raise TrackingError(
                f"MLflow store {db} has schema revision {rev!r}, unknown to the installed "
                f"MLflow (head {head!r}): it was written by a newer MLflow. Upgrade MLflow, or "
                "set mlflow.tracking_uri to another store."
            ) from None
        return (
            f"schema revision {rev!r} is not this MLflow's head {head!r} (a cut migration, or "
            f"an older MLflow's store: if it holds runs you need, upgrade a copy with "
            f"`mlflow db upgrade sqlite:///<copy>`)"
        )
    return None


def _quick_state(db: Path, experiment: str) -> tuple[str | None, str, str | None]:
    """Read-only look at a store at planning time, without importing MLflow:
    ``(store id, fingerprint, problem)``; the store id is ``None`` unless the store looks
    complete and the experiment is active and tagged."""
    if not db.exists():
        return None, "absent", None
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            problem = _structure_problem(con, _CORE_TABLES)
            if problem:
                return None, f"broken:{_stat_id(db)}", problem
            rows = con.execute(
                "SELECT e.experiment_id, e.creation_time, t.value FROM experiments e "
                "LEFT JOIN experiment_tags t ON t.experiment_id = e.experiment_id "
                "AND t.key = ? WHERE e.name = ? AND e.lifecycle_stage = 'active' "
                "ORDER BY e.experiment_id",
                (STORE_TAG, experiment),
            ).fetchall()
        finally:
            con.close()
    except sqlite3.OperationalError as exc:  # locked, or a hot journal it may not roll back
        return None, f"unknown:{exc}", None
    except sqlite3.DatabaseError as exc:
        return None, f"broken:{_stat_id(db)}", f"not a SQLite database: {exc}"
    if not rows:
        return None, "no-experiment", None
    tags = {r[2] for r in rows}
    if len(tags) == 1 and None not in tags:
        return rows[0][2], "tagged", None
    return None, "untagged:" + ",".join(f"{r[0]}@{r[1]}" for r in rows), None


def planned_store_id(uri: str, experiment: str, receipt: str | Path) -> tuple[str, str | None]:
    """The store id the ``mlflow_init`` job must leave, and a warning (or ``None``).

    Called when the workflow is planned (cheap, read-only, no MLflow import). A complete
    local store whose experiment is tagged: its tag. Otherwise (missing, damaged, the
    experiment missing or untagged): a new id derived from the store's state and the id in
    the receipt ``receipt`` (``<out>/mlflow/experiment.json``), the same in every process of
    one run. As a rule parameter of the ``mlflow_init`` and ``track`` jobs it makes them
    re-run exactly when the store is not the one their receipts name. A tracking server is
    not inspected here (``""``).
    """
    db = _sqlite_path(uri)
    if db is None:
        return "", None
    try:
        recorded = read_json(receipt).get("store_id")
    except (OSError, ValueError, AttributeError):
        recorded = None
    current, fingerprint, problem = _quick_state(db, experiment)
    if current:
        return current, None
    if fingerprint.startswith("unknown:") and recorded:  # e.g. locked by a writer just now
        return recorded, None
    blob = json.dumps([uri, experiment, recorded, fingerprint])
    new = "s" + hashlib.sha256(blob.encode()).hexdigest()[:15]
    if problem:
        return new, (
            f"MLflow store {db} cannot be used ({problem}): the mlflow_init job moves it "
            f"aside to {db.name}.broken-<time> and builds a new store; every run is then "
            "logged again from the results files"
        )
    if fingerprint == "absent" and recorded:
        return new, (
            f"MLflow store {db} no longer exists: the mlflow_init job creates it again and "
            "every run is logged again from the results files"
        )
    return new, None


@contextlib.contextmanager
def _store_lock(db: Path, timeout: float = LOCK_TIMEOUT):
    """Exclusive lock on the store's directory (``flock``), for creating, checking and
    moving the store: concurrent workflows on one store take turns."""
    import fcntl

    db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(db.parent, os.O_RDONLY)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TrackingError(
                        f"another process has held the lock on {db.parent} (creating or "
                        f"checking the MLflow store {db.name}) for {timeout:.0f} s"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _siblings(db: Path) -> list[Path]:
    """SQLite's side files of ``db`` (rollback journal, WAL, shared memory)."""
    return [db.with_name(db.name + s) for s in ("-journal", "-wal", "-shm")]


def _remove_temporaries(db: Path) -> None:
    """Temporary stores of killed creations (called under the lock: no creation runs)."""
    for tmp in db.parent.glob(f"{db.name}.tmp-*"):
        tmp.unlink(missing_ok=True)


def _move_aside(db: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = db.with_name(f"{db.name}.broken-{stamp}")
    n = 1
    while aside.exists():
        aside = db.with_name(f"{db.name}.broken-{stamp}-{n}")
        n += 1
    os.replace(db, aside)
    for side, new in zip(_siblings(db), _siblings(aside), strict=True):
        if side.exists():
            os.replace(side, new)
    return aside


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _dispose_engine(uri: str) -> None:
    """Close MLflow's cached connections to ``uri`` (a store renamed, moved or replaced)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    engine = SqlAlchemyStore._engine_map.pop(uri, None)
    if engine is not None:
        engine.dispose()


def _ensure_experiment(client, name: str, loc: str | None, store_id: str) -> tuple[str, str]:
    """The experiment's id and store id: created (tagged ``store_id`` and
    :data:`EXPERIMENT_KIND`) if missing, restored if deleted, tagged if untagged; existing
    tags are kept."""
    kind_key, kind = EXPERIMENT_KIND
    exp = client.get_experiment_by_name(name)
    if exp is None:
        try:
            return client.create_experiment(
                name, artifact_location=loc, tags={STORE_TAG: store_id, kind_key: kind}
            ), store_id
        except Exception:  # created meanwhile by another client of the same server
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise
    if exp.lifecycle_stage == "deleted":
        client.restore_experiment(exp.experiment_id)
    if not exp.tags.get(kind_key):  # created before the tag (or by another tool)
        client.set_experiment_tag(exp.experiment_id, kind_key, kind)
    current = exp.tags.get(STORE_TAG)
    if not current:
        client.set_experiment_tag(exp.experiment_id, STORE_TAG, store_id)
        current = store_id
    return exp.experiment_id, current


def _relocate_artifacts(db: Path, uri: str, exp_id: str, loc: str) -> str | None:
    """Point the experiment and its runs at the artifacts beside the store, when the store
    moved together with them (a moved project, issue 26 #4); MLflow records absolute
    artifact locations and has no API to change one. Only a location of this module's form
    (``.../mlflow-artifacts``, :func:`default_artifact_root`) is rewritten. Returns the old
    location, or ``None`` when nothing moved."""
    con = sqlite3.connect(str(db), timeout=30)
    try:
        with con:  # one transaction
            row = con.execute(
                "SELECT artifact_location FROM experiments WHERE experiment_id = ?",
                (int(exp_id),),
            ).fetchone()
            old = (row[0] or "").rstrip("/") if row else ""
            if not old or old == loc.rstrip("/") or not old.endswith("/mlflow-artifacts"):
                return None
            new = loc.rstrip("/")
            con.execute(
                "UPDATE experiments SET artifact_location = ? WHERE experiment_id = ?",
                (new, int(exp_id)),
            )
            runs = con.execute(
                "SELECT run_uuid, artifact_uri FROM runs WHERE experiment_id = ?", (int(exp_id),)
            ).fetchall()
            con.executemany(
                "UPDATE runs SET artifact_uri = ? WHERE run_uuid = ?",
                [
                    (new + a[len(old) :], rid)
                    for rid, a in runs
                    if a and (a == old or a.startswith(old + "/"))
                ],
            )
    finally:
        con.close()
    _dispose_engine(uri)
    return old


#: how the experiment description written by :func:`_describe_experiment` begins
DESCRIPTION_MARK = "**UFS-bench results**"


def experiment_description(exp_id: str, uri: str) -> str:
    """The experiment's description (MLflow shows it above the runs): the runs table's
    link and what the runs, tags and metrics are."""
    path = runs_table_path(exp_id)
    link = f"{uri.rstrip('/')}{path}" if _is_server(uri) else path.lstrip("/")
    return "\n".join(
        [
            f"{DESCRIPTION_MARK}: [open the runs table with ACC and NMI]({link}). Logged by "
            "the workflow (ufs.bench.tracking); this text is rewritten by each run unless you "
            "edit it.",
            "",
            f"- **Runs table**: `{link}` (`workflowType=machine_learning` opens the runs table "
            "instead of the GenAI overview; `viewStateShareKey` its columns and order).",
            "- A **parent run** per data set × method (`<dataset>/<method>`) groups its child "
            "runs: one per setting and h (`<dataset>/<method>/h=<h>/<setting>`).",
            "- Tags: `protocol` = `label-free` (the method's default setting) or `label-tuned` "
            "(a setting of the grid the label-tuned protocol chooses from); "
            "`selected_by_label_tuning` = `true` on the setting the label-tuned table chose; "
            "`role` = method / variant / reference; `fit_status`; `git_commit`.",
            "- Metrics `acc_mean`, `nmi_mean`, `ari_mean` are fractions in [0, 1] (the tables "
            "show %); `fit_seconds` is the fit's wall-clock time, which the Duration column "
            "shows too.",
        ]
    )


def _describe_experiment(client, exp_id: str, uri: str) -> None:
    """Set the experiment's description (tag ``mlflow.note.content``) unless a user wrote
    their own (one not starting with :data:`DESCRIPTION_MARK`), and the shared view the
    runs-table link opens (:data:`SHARED_VIEW`)."""
    text = experiment_description(exp_id, uri)
    tags = client.get_experiment(exp_id).tags
    current = tags.get("mlflow.note.content")
    if current != text and (not current or current.startswith(DESCRIPTION_MARK)):
        client.set_experiment_tag(exp_id, "mlflow.note.content", text)
    view_tag, view = f"mlflow.sharedViewState.{SHARED_VIEW_KEY}", json.dumps(SHARED_VIEW)
    if tags.get(view_tag) != view:
        client.set_experiment_tag(exp_id, view_tag, view)


def _create_store(db: Path, name: str, loc: str | None, store_id: str) -> tuple[str, str]:
    """Build and migrate a new store at ``mlflow.db.tmp-<pid>-<random>``, create the
    experiment, check it, then rename it onto ``db`` (atomic). On any failure nothing is
    left."""
    # unique in the process too: MLflow caches stores and engines by URI
    tmp = db.with_name(f"{db.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    tmp_uri = f"sqlite:///{tmp.resolve()}"
    try:
        exp = _ensure_experiment(_client(tmp_uri), name, loc, store_id)
        _dispose_engine(tmp_uri)
        problem = store_problem(tmp)
        if problem:
            raise TrackingError(f"the new MLflow store {tmp} is incomplete: {problem}")
        _fsync(tmp)
        os.replace(tmp, db)
        _fsync(db.parent)
        return exp
    finally:
        for f in (tmp, *_siblings(tmp)):
            f.unlink(missing_ok=True)


def init_experiment(
    uri: str,
    name: str,
    artifact_root: str | Path | None,
    receipt: str | Path,
    store_id: str = "",
    warn=None,
) -> str:
    """Create the store and the experiment once (idempotent); write a receipt.

    ``artifact_root`` is used for a local store only; a tracking server keeps the
    artifacts where its ``--artifacts-destination`` says (proxied, ``mlflow-artifacts:/``).
    A local SQLite store is created atomically, and an existing one that fails
    :func:`store_problem` is moved aside (WARNING on stderr naming the file) and rebuilt,
    all under a lock on its directory. ``store_id`` (from :func:`planned_store_id`) tags
    a newly created or untagged experiment; an existing tag is kept. The receipt records
    the experiment's store id and the runs table's path in the UI (:func:`runs_table_path`).
    ``warn(message)`` reports a moved-aside store (default: ``WARNING: ...`` on stderr).
    """
    if warn is None:

        def warn(message: str) -> None:
            print(f"WARNING: {message}", file=sys.stderr)

    store_id = store_id or "s" + os.urandom(8).hex()[:15]
    local = artifact_root and not _is_server(uri)
    loc = Path(artifact_root).resolve().as_uri() if local else None
    db = _sqlite_path(uri)
    try:
        if db is None:
            exp_id, sid = _ensure_experiment(_client(uri), name, loc, store_id)
        else:
            with _store_lock(db):
                _remove_temporaries(db)
                if db.exists():
                    problem = _retry_locked(lambda: store_problem(db))
                    if problem:
                        aside = _move_aside(db)
                        warn(
                            f"MLflow store {db} cannot be used ({problem}); moved aside to "
                            f"{aside} and rebuilt. Every run is logged again from the "
                            "results files."
                        )
                # connections this process may hold to a file moved aside or replaced
                _dispose_engine(uri)
                if db.exists():
                    exp_id, sid = _retry_locked(
                        lambda: _ensure_experiment(_client(uri), name, loc, store_id)
                    )
                    moved = loc and _relocate_artifacts(db, uri, exp_id, loc)
                    if moved:
                        print(
                            f"MLflow store {db} was moved with its artifacts: artifact "
                            f"location {moved} -> {loc}",
                            file=sys.stderr,
                        )
                else:
                    exp_id, sid = _create_store(db, name, loc, store_id)
        _retry_locked(lambda: _describe_experiment(_client(uri), exp_id, uri))
    except TrackingError:
        raise
    except Exception as exc:
        raise _wrap(uri, f"creating experiment {name!r}", exc) from exc
    write_json(
        receipt,
        {
            "tracking_uri": uri,
            "experiment": name,
            "experiment_id": exp_id,
            "store_id": sid,
            "runs_table": runs_table_path(exp_id),
        },
    )
    return exp_id


def _result_hash(ev: dict[str, Any], row: dict[str, Any]) -> str:
    core = {k: row[k] for k in row if k not in ("fit_seconds", "fit_info", "fit_warnings")}
    blob = json.dumps(to_jsonable([core, ev["code_version"]]), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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


def _existing_runs(client, exp_id: str, dataset: str, oid: str, legacy: bool):
    """Active runs of this output directory and dataset, by run key; and, if ``legacy``
    (the store is this output directory's own), the dataset's runs logged before runs
    carried an ``output_id`` tag."""
    runs: dict[str, list] = {}
    for r in _search(client, exp_id, f"tags.dataset = '{dataset}' and tags.output_id = '{oid}'"):
        runs.setdefault(r.data.tags.get("run_key", ""), []).append(r)
    old = []
    if legacy:
        old = [
            r
            for r in _search(client, exp_id, f"tags.dataset = '{dataset}'")
            if "output_id" not in r.data.tags
        ]
    return runs, old


def _metric_rows(row: dict[str, Any], ts: int):
    from mlflow.entities import Metric

    out = []
    for k, v in row.items():
        if (k.endswith("_mean") or k.endswith("_std")) and v is not None:
            out.append(Metric(k, _rounded(v), ts, 0))
    for k in ("tp", "cp", "fit_seconds"):
        if row.get(k) is not None:
            out.append(Metric(f"{k}_at_h" if k in ("tp", "cp") else k, _rounded(row[k]), ts, 0))
    for k, v in (row.get("fit_info") or {}).items():
        if isinstance(v, bool | int | float):
            out.append(Metric(f"fit_{k}", float(v), ts, 0))
    for m, vals in row["per_restart"].items():
        out.extend(Metric(f"{m}_per_restart", _rounded(v), ts, i) for i, v in enumerate(vals))
    for i, v in enumerate(row.get("objective_curve") or []):
        out.append(Metric("objective", float(v), ts, i))
    return out


def label_tuned_picks(table: str | Path, dataset: str) -> set[tuple[str, str, str]]:
    """``(method, pid, h_label)`` of the label-tuned rows of a results table for
    ``dataset``: the settings the label-tuned protocol chose (one per method and h)."""
    import csv

    with open(table, newline="") as fh:
        return {
            (r["method"], r["pid"], r["h_label"])
            for r in csv.DictReader(fh)
            if r.get("protocol") == "oracle" and r.get("dataset") == dataset
        }


def data_profile(path: str | Path) -> dict[str, int]:
    """Samples, features and classes of a standardized data file (the run's data set)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as f:
        n, p = f["X"].shape
        k = int(len(np.unique(f["y"])))
    return {"n_samples": int(n), "n_features": int(p), "n_classes": k}


def _dataset_input(dataset: str, data_hash: str, source: str, profile: dict[str, Any]):
    """The run's data set as MLflow's ``Datasets`` column shows it (``log_inputs``)."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    ds = Dataset(
        name=dataset,
        digest=data_hash[:16],
        source_type="local",
        source=json.dumps({"uri": source}),
        profile=json.dumps(profile) if profile else None,
    )
    return DatasetInput(ds, tags=[InputTag("mlflow.data.context", "training")])


def _log_run(
    client,
    exp_id: str,
    ev: dict[str, Any],
    row: dict[str, Any],
    tags: dict,
    name: str,
    data_input=None,
) -> str:
    """One run: params, metrics (histories for per-restart values and the objective), the
    note, the data set input and the artifacts. Its start and end times are set one fit
    time apart, so that the runs table's Duration column shows the fit's time (wall
    clock), not the time logging took."""
    from mlflow.entities import Param

    ts = int(time.time() * 1000)
    run = client.create_run(exp_id, run_name=name, tags=tags, start_time=ts)
    rid = run.info.run_id
    params = {
        **{f"param.{k}": v for k, v in ev["params"].items()},
        "h": row["h_label"],
        "dataset": ev["dataset"],
        "method": ev["method"],
        "restarts": ev["restarts"],
        "seed": ev["seed"],
        "nmi_average": ev["nmi_average"],
    }
    metrics = _metric_rows(row, ts)
    for i in range(0, max(len(metrics), 1), 900):
        client.log_batch(
            rid,
            metrics=metrics[i : i + 900],
            params=[Param(k, str(v)) for k, v in params.items()] if i == 0 else [],
        )
    if data_input is not None:
        client.log_inputs(rid, datasets=[data_input])
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "selected_features.json").write_text(json.dumps(row["selected"]))
        (Path(tmp) / "evaluation.json").write_text(
            json.dumps(to_jsonable({**ev, "results": [row]}), indent=1)
        )
        client.log_artifacts(rid, tmp)
    fit_ms = int(1000 * float(row.get("fit_seconds") or 0.0))
    client.set_terminated(rid, "FINISHED", end_time=ts + max(fit_ms, 0))
    return rid


def run_description(ev: dict[str, Any], row: dict[str, Any]) -> str:
    """A run's description (its page's note; issue 39: it read "dataset wine, setting
    44136fa355: {}"): the method, data set and h, the protocol in the tables' words, the
    setting's parameters and the fit's status."""
    params = ", ".join(f"{k} = {v}" for k, v in sorted(ev["params"].items()))
    setting = params or "the method's defaults (no parameters)"
    if ev["label_free"]:
        protocol = "label-free: the method's documented default setting, no labels used"
    else:
        protocol = "label-tuned: a setting of the grid the labels choose from (as in the papers)"
    h = f"h = {row['h_label']}"
    if row["h_label"] == "all":
        h = "all features"
    elif row.get("uses_all_features"):  # the all-features reference, repeated at each h
        h = f"all features (shown at {h})"
    return (
        f"{ev['method']} on {ev['dataset']}, {h}. Protocol {protocol}. Setting "
        f"{ev['pid']}: {setting}. Fit status: {row.get('fit_status') or 'ok'}. "
        f"Scores: mean over {ev['restarts']} k-means restarts (seed {ev['seed']})."
    )


#: tag of a parent run (one per data set × method, grouping its settings' runs)
PARENT_TAG = "ufs.parent"


def _logged_rows(ev: dict[str, Any], hs: list[int] | None):
    """The rows of an evaluation as runs: a method that uses every feature (``h_label``
    ``all``) is logged once per h of the data set, with the same numbers, so that a filter
    on ``params.h`` keeps the all-features reference beside the methods (issue 27)."""
    for row in ev["results"]:
        if row["h_label"] == "all" and hs:
            for h in hs:
                yield {**row, "h": h, "h_label": str(h), "uses_all_features": True}
        else:
            yield row


def _parent_runs(
    client,
    exp_id,
    methods,
    existing,
    *,
    dataset,
    identity,
    data_hash,
    tags,
    suffix,
    fit_ms=None,
):
    """The parent run of each ``(dataset, method)``: found among ``existing`` (popped) or
    created; duplicates go. A new parent lasts its settings' fit time together
    (``fit_ms[method]``, milliseconds; issue 39: parents showed the ~50 ms their creation
    took as Duration). Returns method -> (run id, logged anew)."""
    out = {}
    for method, role in sorted(methods.items()):
        key = _run_key_of(f"parent|{dataset}|{method}", identity, data_hash)
        same = existing.pop(key, [])
        keep = [r for r in same if r.info.status == "FINISHED"]
        for r in same:
            if not keep or r.info.run_id != keep[0].info.run_id:
                client.delete_run(r.info.run_id)
        want = {
            **tags,
            "run_key": key,
            PARENT_TAG: "true",
            "dataset": dataset,
            "method": method,
            "role": role,
        }
        name = f"{dataset}/{method}{suffix}"
        if keep:
            if keep[0].info.run_name != name:
                client.update_run(keep[0].info.run_id, name=name)
            _refresh_tags(client, keep[0], want)
            out[method] = (keep[0].info.run_id, False)
            continue
        ts = int(time.time() * 1000)
        run = client.create_run(exp_id, run_name=name, tags=want, start_time=ts)
        span = int((fit_ms or {}).get(method, 0))
        client.set_terminated(run.info.run_id, "FINISHED", end_time=ts + max(span, 0))
        out[method] = (run.info.run_id, True)
    return out


def _log_pass(
    client,
    exp_id: str,
    evs: list,
    *,
    dataset: str,
    out: Path,
    data_hash: str,
    legacy: bool,
    code_version: str,
    hs: list[int] | None = None,
    picked: set[tuple[str, str, str]] | None = None,
    data_input=None,
) -> tuple[dict[str, str], dict[str, int]]:
    """One idempotent pass: log what is missing, replace what is outdated, rename kept runs
    whose name is not :func:`run_name`'s, refresh their tags, delete the stale runs of this
    output directory and dataset. Each (dataset, method) has a parent run whose children
    are its settings' runs (tag ``mlflow.parentRunId``). In a store that is not the
    directory's own (``legacy`` false) run names end in ``@<directory name>:<output id>``,
    so that they stay distinct in a shared experiment. ``out``: the output directory,
    resolved (run keys are :func:`run_key`'s); ``hs``: the data set's h values (an
    all-features row is logged at each); ``picked``: the ``(method, pid, h_label)`` the
    label-tuned table chose (tag ``selected_by_label_tuning``; ``None``: not known)."""
    identity = output_identity(out)
    oid = _id_of(identity)
    counts = {"logged": 0, "skipped": 0, "replaced": 0, "removed": 0, "retagged": 0}
    keys: dict[str, str] = {}
    existing, old = _existing_runs(client, exp_id, dataset, oid, legacy)
    suffix = "" if legacy else f"@{out.name}:{oid[:6]}"
    common = {"output_dir": str(out), "output_id": oid, "data_sha256": data_hash}
    roles = {ev["method"]: _facts_tags(ev)["role"] for ev in evs}
    fit_ms: dict[str, float] = {}
    for ev in evs:  # every fit of the method's settings on this data set, once each
        seconds = ev.get("fit_seconds_total")
        if seconds is None:  # a ranking or full method's one fit is repeated at every h
            each = [float(r.get("fit_seconds") or 0.0) for r in ev["results"]] or [0.0]
            seconds = sum(each) if ev.get("kind") == "subset" else max(each)
        fit_ms[ev["method"]] = fit_ms.get(ev["method"], 0.0) + 1000 * float(seconds)
    parents = _parent_runs(
        client,
        exp_id,
        roles,
        existing,
        dataset=dataset,
        identity=identity,
        data_hash=data_hash,
        tags=common,
        suffix=suffix,
        fit_ms=fit_ms,
    )
    todo = []
    for ev in evs:
        for row in _logged_rows(ev, hs):
            what = (ev["dataset"], ev["method"], ev["pid"], row["h_label"])
            what += (ev["restarts"], ev["seed"], ev["nmi_average"])
            skey = setting_key(*what)
            todo.append((ev, row, skey, _run_key_of(skey, identity, data_hash)))
    names = _run_names(
        {
            key: {
                "dataset": ev["dataset"],
                "method": ev["method"],
                "h_label": row["h_label"],
                "params": ev["params"],
                "pid": ev["pid"],
            }
            for ev, row, _, key in todo
        },
        suffix,
    )
    for ev, row, skey, key in todo:
        rhash = _result_hash(ev, row)
        tags = {
            "run_key": key,
            "setting_key": skey,
            "result_hash": rhash,
            **common,
            "mlflow.parentRunId": parents[ev["method"]][0],
            "dataset": ev["dataset"],
            "dataset_base": ev.get("dataset_base", ev["dataset"]),
            "method": ev["method"],
            "kind": ev["kind"],
            "params_id": ev["pid"],
            # the tables' words: the default setting (label-free) or a setting of the grid
            # the label-tuned protocol chooses from; selected_by_label_tuning marks its pick
            "protocol": "label-free" if ev["label_free"] else "label-tuned",
            "in_grid": str(ev["in_grid"]).lower(),
            "label_free": str(ev["label_free"]).lower(),
            # ok / fixed_budget / not_converged / diverged / degenerate / budget_exceeded
            "fit_status": str(row.get("fit_status", "")),
            **_facts_tags(ev),
            "code_version": ev["code_version"],
            "ufs_version": code_version,
        }
        if picked is not None:
            chosen = (ev["method"], ev["pid"], row["h_label"]) in picked
            tags["selected_by_label_tuning"] = str(chosen).lower()
        if ev.get("git_commit"):  # the commit of the code that computed it (the fit job's)
            tags["mlflow.source.git.commit"] = ev["git_commit"].removesuffix("-dirty")
            tags["git_commit"] = ev["git_commit"]
        if row.get("uses_all_features"):
            tags["h_all"] = "true"  # the all-features reference, repeated at this h
        tags["mlflow.note.content"] = run_description(ev, row)
        same = existing.pop(key, [])
        keep = [
            r
            for r in same
            if r.info.status == "FINISHED" and r.data.tags.get("result_hash") == rhash
        ]
        if keep:
            # every other run with the key goes: duplicates, and the orphan left
            # RUNNING when a create_run request was retried after the server had
            # committed it but the reply was lost (the HTTP client retries POSTs)
            for r in same:
                if r.info.run_id != keep[0].info.run_id:
                    client.delete_run(r.info.run_id)
            if keep[0].info.run_name != names[key]:  # logged under an older rule
                client.update_run(keep[0].info.run_id, name=names[key])
            if _refresh_tags(client, keep[0], tags):
                counts["retagged"] += 1
            if data_input is not None and not keep[0].inputs.dataset_inputs:
                client.log_inputs(keep[0].info.run_id, datasets=[data_input])
            keys[key] = keep[0].info.run_id
            counts["skipped"] += 1
            continue
        for r in same:  # unfinished (killed) or outdated runs
            client.delete_run(r.info.run_id)
            counts["replaced"] += 1
        keys[key] = _log_run(client, exp_id, ev, row, tags, names[key], data_input)
        counts["logged"] += 1
    # what is left: runs of keys no longer in the results (the data or the plan changed)
    # and, in this directory's own store, runs logged before runs carried an output_id.
    # Only runs of the methods logged here: a slice (only_methods) adds or refreshes its own
    # part and leaves every other method's runs as they are (issue 26 #1)
    stale = [r for runs in existing.values() for r in runs if r.data.tags.get("method") in roles]
    for r in stale + old:
        client.delete_run(r.info.run_id)
        counts["removed"] += 1
    return keys, counts


def _refresh_tags(client, run, tags: dict[str, str]) -> bool:
    """Set the tags of a kept run that differ from what the results say now (issue 26 #5:
    a grid change flips ``in_grid`` without changing the results; a moved directory
    changes ``output_dir``): the store never disagrees with the tables. True if any."""
    from mlflow.entities import RunTag

    stale = [RunTag(k, v) for k, v in tags.items() if run.data.tags.get(k) != v]
    if stale:
        client.log_batch(run.info.run_id, tags=stale)
    return bool(stale)


def _facts_tags(ev: dict[str, Any]) -> dict[str, str]:
    """``role`` (competitor, variant or reference), ``input_space`` (the matrix the fit
    received: z-scored, raw or [0, 1]) and, for a chance reference, its ``draw``."""
    from ..registry import method_facts

    facts = method_facts(ev["method"], ev.get("params") or {})
    tags = {"role": facts["role"], "input_space": facts["input_space"]}
    if facts["draw"] == facts["draw"]:  # not NaN
        tags["draw"] = str(facts["draw"])
    return tags


def log_evaluations(
    uri: str,
    experiment: str,
    evaluations: list[str | Path],
    receipt: str | Path,
    *,
    dataset: str,
    output_dir: str | Path,
    data_sha256: str,
    code_version: str = "",
    hs: list[int] | None = None,
    table: str | Path | None = None,
    data_source: str = "",
    data_profile: dict[str, Any] | None = None,
) -> dict[str, int]:
    """Log every (setting, h) of the given evaluation files that is not yet logged.

    Runs are keyed by :func:`run_key` (``output_dir``'s identity, the data's
    ``data_sha256``) and only runs of ``output_dir`` and ``dataset`` are read, replaced or
    deleted. A ``database is locked`` error repeats the (idempotent) pass with backoff, at
    most :data:`LOCKED_RETRIES` times. The receipt records the run ids and the store id.
    ``hs``: the data set's h values; ``table``: the data set's results table, whose
    label-tuned rows mark the chosen settings (:func:`label_tuned_picks`);
    ``data_source`` / ``data_profile``: the data set input every run records.
    """
    db = _sqlite_path(uri)
    if db is not None and not db.exists():
        # MlflowClient would create a new store here, outside mlflow_init's atomic creation
        raise TrackingError(
            f"MLflow store {db} does not exist (deleted after the mlflow_init job ran?). "
            "Re-run the workflow: mlflow_init creates it again and every run is logged "
            "again from the results files."
        )
    try:
        client = _client(uri)
        exp = _retry_locked(lambda: client.get_experiment_by_name(experiment))
    except Exception as exc:
        raise _wrap(uri, "looking up the experiment", exc) from exc
    if exp is None:
        raise TrackingError(
            f"MLflow experiment {experiment!r} does not exist in {uri!r}; it is created by the "
            "workflow's mlflow_init rule before any logging job"
        )
    out = Path(output_dir).resolve()
    legacy = db is not None and db.resolve() == out / "mlflow.db"
    if legacy:  # records the identity before the pass: a moved store's runs are found
        try:
            output_identity(out, adopt=_store_identity(client, exp.experiment_id, out))
        except Exception as exc:
            raise _wrap(uri, "reading the store's runs", exc) from exc
    picked = label_tuned_picks(table, dataset) if table else None
    data_input = (
        _dataset_input(dataset, data_sha256, data_source, data_profile or {})
        if data_source
        else None
    )
    try:
        evs = read_evaluations(evaluations)
        keys, counts = _retry_locked(
            lambda: _log_pass(
                client,
                exp.experiment_id,
                evs,
                dataset=dataset,
                out=out,
                data_hash=data_sha256,
                legacy=legacy,
                code_version=code_version,
                hs=hs,
                picked=picked,
                data_input=data_input,
            )
        )
    except Exception as exc:
        raise _wrap(uri, f"logging runs of dataset {dataset!r}", exc) from exc
    write_json(
        receipt,
        {
            "experiment_id": exp.experiment_id,
            "store_id": exp.tags.get(STORE_TAG, ""),
            "output_dir": str(out),
            "data_sha256": data_sha256,
            "runs": keys,
            **counts,
        },
    )
    return counts
