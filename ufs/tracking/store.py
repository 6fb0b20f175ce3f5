"""The MLflow store and experiment (from ``ufs.bench.tracking``): the SQLite
store's health check, its atomic creation under a lock, its identity tag, and
:func:`init_experiment` (the design notes are :mod:`ufs.tracking.runs`')."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from ..fileio import read_json, write_json
from .client import (
    EXPERIMENT_KIND,
    STORE_TAG,
    TrackingError,
    _client,
    _is_server,
    _retry_locked,
    _sqlite_path,
    _wrap,
    default_artifact_root,
)
from .names import SHARED_VIEW, SHARED_VIEW_KEY, runs_table_path

#: seconds to wait for another process creating or checking the same SQLite store
LOCK_TIMEOUT = 600.0


# tables any MLflow tracking store has (the full check uses MLflow's own list)
_CORE_TABLES = frozenset(
    {"alembic_version", "experiments", "experiment_tags", "runs", "tags", "params", "metrics"}
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
    moved together with them (a moved project); MLflow records absolute
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
            "the workflow (ufs.tracking); this text is rewritten by each run unless you "
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

    ``artifact_root`` is used for a local store only (``None``: beside the store,
    :func:`default_artifact_root`; MLflow's own default would be ``./mlruns`` in whatever
    folder the process runs in); a tracking server keeps the artifacts where its
    ``--artifacts-destination`` says (proxied, ``mlflow-artifacts:/``).
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
    if artifact_root is None:
        artifact_root = default_artifact_root(uri)
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
