"""MLflow logging (ufs.tracking) on a local SQLite store: fast, no workflow, no server.
The same behaviour through the workflow: tests/test_mlflow_store.py."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlflow")

from ufs import tracking  # noqa: E402


def _evaluation(path, dataset="toy", hs=(2, 4)):
    rows = [
        {
            "h": h,
            "h_label": str(h),
            "acc_mean": 0.5 + h / 100,
            "acc_std": 0.01,
            "nmi_mean": 0.4,
            "nmi_std": 0.02,
            "fit_seconds": 0.1,
            "fit_info": {"n_iter": 3},
            "fit_warnings": [],
            "fit_status": "degenerate" if h > 2 else "ok",
            "objective_curve": [3.0, 2.0, 1.5],
            "per_restart": {"acc": [0.5, 0.6], "nmi": [0.4, 0.4]},
            "selected": list(range(h)),
        }
        for h in hs
    ]
    ev = {
        "code_version": "abc",
        "dataset": dataset,
        "dataset_base": dataset,
        "in_grid": True,
        "kind": "subset",
        "label_free": True,
        "method": "kmeans_ufs",
        "nmi_average": "arithmetic",
        "params": {"gamma": 1.0},
        "pid": "p0",
        "restarts": 2,
        "seed": 0,
        "results": rows,
    }
    path.write_text(json.dumps({"dataset": dataset, "evaluations": [ev]}))
    return path


def _active(uri, experiment, parents=False):
    """The active runs of the settings (``parents``: the parent runs instead)."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs(
        [exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=10000
    )
    return [r for r in runs if ("ufs.parent" in r.data.tags) == parents]


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A migrated store without experiments: copied by tests that do not test creation
    (a migration takes seconds)."""
    db = tmp_path_factory.mktemp("pristine") / "mlflow.db"
    tracking.client._client(f"sqlite:///{db}").search_experiments()
    tracking.store._dispose_engine(f"sqlite:///{db}")
    return db


def _store(pristine, directory):
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pristine, directory / "mlflow.db")
    return tracking.default_tracking_uri(directory)


def test_log_once_and_remove_an_orphan_with_a_logged_key(tmp_path, pristine):
    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", tmp_path / "art", tmp_path / "init.json")
    ev = _evaluation(tmp_path / "c000.json")
    doc = json.loads(ev.read_text())
    doc["evaluations"][0]["params"] = {}  # kmeans_ufs has no parameter gamma
    ev.write_text(json.dumps(doc))
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d1"}
    assert tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)["logged"] == 2
    runs = _active(uri, "e")
    assert {r.info.status for r in runs} == {"FINISHED"} and len(runs) == 2
    # the fit status is a tag: a degenerate fit is visible and filterable in MLflow
    assert {(r.data.params["h"], r.data.tags["fit_status"]) for r in runs} == {
        ("2", "ok"),
        ("4", "degenerate"),
    }
    # the role and the input space are tags too (input scaling is a factor)
    assert {(r.data.tags["role"], r.data.tags["input_space"]) for r in runs} == {
        ("method", "standardized")
    }
    assert not any("draw" in r.data.tags for r in runs)
    # what a create_run retried after a lost reply leaves: a second, unfinished run
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    tags = {k: runs[0].data.tags[k] for k in ("run_key", "result_hash", "dataset", "output_id")}
    orphan = client.create_run(runs[0].info.experiment_id, tags=tags)
    counts = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)
    assert counts == {"logged": 0, "skipped": 2, "replaced": 0, "removed": 0, "retagged": 0}
    assert client.get_run(orphan.info.run_id).info.lifecycle_stage == "deleted"
    assert {r.info.run_id for r in _active(uri, "e")} == {r.info.run_id for r in runs}
    # local store: artifacts under the given artifact root
    assert len(list((tmp_path / "art").rglob("selected_features.json"))) == 2


def test_a_local_store_without_an_artifact_root_keeps_them_beside_it(
    tmp_path, monkeypatch, pristine
):
    """MLflow's own default for a SQLite store is ``./mlruns`` in the process's folder: the
    test suite used to write its runs' artifacts into the checkout it ran from."""
    from mlflow.tracking import MlflowClient

    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    uri = _store(pristine, tmp_path / "store")
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    exp = MlflowClient(uri).get_experiment_by_name("e")
    beside = Path(tracking.default_artifact_root(uri))
    assert exp.artifact_location == beside.as_uri()
    ev = _evaluation(tmp_path / "c000.json")
    doc = json.loads(ev.read_text())
    doc["evaluations"][0]["params"] = {}
    ev.write_text(json.dumps(doc))
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d1"}
    assert tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)["logged"] == 2
    assert len(list(beside.rglob("selected_features.json"))) == 2
    assert list(cwd.iterdir()) == []


def test_server_experiment_leaves_artifacts_to_the_server(tmp_path, monkeypatch, pristine):
    from mlflow.tracking import MlflowClient

    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "loc", tmp_path / "a", tmp_path / "r")
    exp = MlflowClient(uri).get_experiment_by_name("loc")
    assert exp.artifact_location == (tmp_path / "a").resolve().as_uri()
    assert tracking.default_artifact_root(f"sqlite:///{tmp_path}/s/m.db") == str(
        tmp_path.resolve() / "s" / "mlflow-artifacts"
    )
    assert tracking.default_artifact_root("http://127.0.0.1:5000") is None

    created = {}

    class Client:
        def get_experiment_by_name(self, name):
            return None

        def create_experiment(self, name, artifact_location=None, tags=None):
            created[name] = (artifact_location, tags)
            return "7"

        def get_experiment(self, exp_id):
            return type("E", (), {"tags": dict(created["srv"][1])})()

        def set_experiment_tag(self, exp_id, key, value):
            created["srv"][1][key] = value

    monkeypatch.setattr(tracking.store, "_client", lambda uri: Client())
    tracking.init_experiment("http://127.0.0.1:5000", "srv", tmp_path / "a", tmp_path / "r.json")
    assert created["srv"][0] is None and created["srv"][1][tracking.STORE_TAG]
    # the description links the runs table on the server itself
    note = created["srv"][1]["mlflow.note.content"]
    assert "(http://127.0.0.1:5000/#/experiments/7/runs?workflowType=machine_learning&" in note
    # a server is not inspected when the workflow is planned
    assert tracking.planned_store_id("http://127.0.0.1:5000", "srv", tmp_path / "r.json") == (
        "",
        None,
    )


def test_unreachable_server_fails_fast_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        uri = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, not listening: refused
        with pytest.raises(tracking.TrackingError) as err:
            tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
        with pytest.raises(tracking.TrackingError) as err2:
            tracking.log_evaluations(
                uri, "e", [], tmp_path / "r.json", dataset="toy", output_dir=tmp_path,
                data_sha256="d",
            )  # fmt: skip
    for e in (err, err2):
        msg = str(e.value)
        assert msg.startswith(f"Cannot reach the MLflow tracking server at {uri}: ")
        assert "docs/guide/mlflow-server.md" in msg and "log exactly the missing runs" in msg
    assert not (tmp_path / "init.json").exists() and not (tmp_path / "r.json").exists()


def test_store_identity_follows_creation_damage_and_deletion(tmp_path, pristine):
    """The planned store id is stable for a sound store and changes (with a warning) when
    the store is damaged or deleted; a damaged store is moved aside and rebuilt."""
    out = tmp_path / "results"
    uri, receipt = tracking.default_tracking_uri(out), out / "mlflow" / "experiment.json"
    db = out / "mlflow.db"
    first, warning = tracking.planned_store_id(uri, "e", receipt)
    assert warning is None and not db.exists()
    _store(pristine, out)  # a sound store without the experiment (another tool made it)
    (out / "mlflow.db.tmp-999999-0").write_bytes(b"half a store")  # a killed creation's
    tracking.init_experiment(uri, "e", None, receipt, store_id=first)
    assert json.loads(receipt.read_text())["store_id"] == first
    assert _leftovers(out) == [] and tracking.store_problem(db) is None
    assert tracking.planned_store_id(uri, "e", receipt) == (first, None)  # stable

    with sqlite3.connect(db) as con:  # what a migration cut by SIGKILL leaves
        con.execute("CREATE TABLE _alembic_tmp_runs (x INTEGER)")
        con.execute("DELETE FROM alembic_version")
    assert "_alembic_tmp_runs" in tracking.store_problem(db)
    second, warning = tracking.planned_store_id(uri, "e", receipt)
    assert second != first and "_alembic_tmp_runs" in warning and "moves it aside" in warning
    warned = []
    tracking.init_experiment(uri, "e", None, receipt, store_id=second, warn=warned.append)
    (aside,) = out.glob("mlflow.db.broken-*")
    assert len(warned) == 1 and str(aside) in warned[0] and "_alembic_tmp_runs" in warned[0]
    assert tracking.store_problem(db) is None and _leftovers(out) == []
    assert json.loads(receipt.read_text())["store_id"] == second
    assert tracking.planned_store_id(uri, "e", receipt) == (second, None)

    db.unlink()
    third, warning = tracking.planned_store_id(uri, "e", receipt)
    assert third not in (first, second) and "no longer exists" in warning
    with pytest.raises(tracking.TrackingError, match="does not exist"):
        # a logging job never creates a store itself (not atomically, not under the lock)
        tracking.log_evaluations(
            uri, "e", [], out / "r.json", dataset="toy", output_dir=out, data_sha256="d"
        )
    assert not db.exists()


def test_a_failed_creation_leaves_no_store(tmp_path, monkeypatch):
    """A full disk (here: ENOSPC after the migration) while creating: a clear error, and
    neither the store nor its temporary file."""
    real = tracking.store._ensure_experiment

    def full_disk(*args):
        real(*args)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tracking.store, "_ensure_experiment", full_disk)
    uri = tracking.default_tracking_uri(tmp_path)
    with pytest.raises(tracking.TrackingError, match="No space left on device"):
        tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_output_dirs_sharing_a_store_touch_only_their_own_runs(tmp_path, pristine):
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    uri = _store(pristine, out_a)  # a's own store, shared with b
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    ev = _evaluation(tmp_path / "c000.json")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp_id = client.get_experiment_by_name("e").experiment_id
    legacy = client.create_run(exp_id, tags={"dataset": "toy", "run_key": "old"}).info.run_id

    def log(out, data):
        return tracking.log_evaluations(
            uri, "e", [ev], tmp_path / "r.json", dataset="toy", output_dir=out, data_sha256=data
        )

    def runs_of(out):
        oid = tracking.output_id(out)
        return {r.info.run_id: r for r in _active(uri, "e") if r.data.tags.get("output_id") == oid}

    assert log(out_b, "hb") == {
        "logged": 2,
        "skipped": 0,
        "replaced": 0,
        "removed": 0,
        "retagged": 0,
    }
    # b's logging leaves a run it cannot own alone (no output_id, not in b's store)
    assert client.get_run(legacy).info.lifecycle_stage == "active"
    # same dataset name, same settings, other data and directory: a's own runs, nothing of b's
    assert log(out_a, "ha") == {
        "logged": 2,
        "skipped": 0,
        "replaced": 0,
        "removed": 1,
        "retagged": 0,
    }
    assert client.get_run(legacy).info.lifecycle_stage == "deleted"  # a's store, pre-tag run
    b_runs, a_runs = runs_of(out_b), runs_of(out_a)
    assert len(b_runs) == len(a_runs) == 2 and len(_active(uri, "e")) == 4
    assert len({r.data.tags["run_key"] for r in _active(uri, "e")}) == 4
    assert {r.data.tags["output_dir"] for r in a_runs.values()} == {str(out_a.resolve())}
    # a's data changed: its runs are replaced under new keys, the stale ones (and their
    # parent run) removed; b intact
    assert log(out_a, "ha2") == {
        "logged": 2,
        "skipped": 0,
        "replaced": 0,
        "removed": 3,
        "retagged": 0,
    }
    assert runs_of(out_b).keys() == b_runs.keys()
    assert {r.data.tags["data_sha256"] for r in runs_of(out_a).values()} == {"ha2"}
    receipt = json.loads((tmp_path / "r.json").read_text())
    assert receipt["data_sha256"] == "ha2" and receipt["output_dir"] == str(out_a.resolve())
    assert receipt["store_id"] == client.get_experiment(exp_id).tags[tracking.STORE_TAG]


def test_database_is_locked_is_retried_with_backoff(tmp_path, monkeypatch, pristine):
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    ev = _evaluation(tmp_path / "c000.json")
    sleeps = []
    monkeypatch.setattr(tracking.client, "_sleep", sleeps.append)
    real = MlflowClient.log_batch
    failures = {"left": 1}

    def flaky(self, *args, **kwargs):  # a run is half-logged when the lock times out
        if failures["left"]:
            failures["left"] -= 1
            raise MlflowException("(sqlite3.OperationalError) database is locked")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_batch", flaky)
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d"}
    counts = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)
    # the second pass removed the half-logged run and logged both
    assert counts == {"logged": 2, "skipped": 0, "replaced": 1, "removed": 0, "retagged": 0}
    runs = _active(uri, "e")
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    assert len(sleeps) == 1 and 0.75 <= sleeps[0] <= 1.25

    # a lock that never clears: bounded, then a clear error and no receipt
    failures["left"] = 10**6
    sleeps.clear()
    ev2 = _evaluation(tmp_path / "c001.json", dataset="toy2")
    kw2 = {**kw, "dataset": "toy2"}
    with pytest.raises(tracking.TrackingError, match="database is locked"):
        tracking.log_evaluations(uri, "e", [ev2], tmp_path / "r2.json", **kw2)
    assert (
        len(sleeps) == tracking.LOCKED_RETRIES - 1 and sleeps[-1] >= 2 ** (len(sleeps) - 1) * 0.75
    )
    assert not (tmp_path / "r2.json").exists()


def test_data_hash_is_of_the_arrays_not_the_file(tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    np.savez(tmp_path / "a.npz", X=X, y=np.array([0, 1, 0, 1]))
    np.savez(tmp_path / "b.npz", y=np.array([0, 1, 0, 1]), X=X.copy())
    np.savez(tmp_path / "c.npz", X=X + 1e-12, y=np.array([0, 1, 0, 1]))
    h = [tracking.data_sha256(tmp_path / f"{n}.npz") for n in "abc"]
    assert h[0] == h[1] != h[2] and len(h[0]) == 64
    key = tracking.run_key(
        "d", "m", "p", "2", 2, 0, "arithmetic", output_dir=tmp_path, data_sha256=h[0]
    )
    assert key != tracking.run_key(
        "d", "m", "p", "2", 2, 0, "arithmetic", output_dir=tmp_path / "x", data_sha256=h[0]
    )
    assert key != tracking.run_key(
        "d", "m", "p", "2", 2, 0, "arithmetic", output_dir=tmp_path, data_sha256=h[2]
    )


def _evaluations(path, settings, dataset="toy", hs=(2, 4)):
    """One evaluation file with one evaluation per ``(method, pid, params)``."""
    one = json.loads(_evaluation(path, dataset, hs).read_text())["evaluations"][0]
    evs = [{**one, "method": m, "pid": pid, "params": params} for m, pid, params in settings]
    path.write_text(json.dumps({"dataset": dataset, "evaluations": evs}))
    return path


def test_experiment_opens_on_the_runs_table(tmp_path, pristine):
    """MLflow 3 UIs that read ``mlflow.experimentKind`` open a ``custom_model_development``
    experiment on its runs table (a ``genai_development`` one, or one whose kind MLflow 3.17
    takes from its default GenAI switch, on an empty GenAI overview)."""
    from mlflow.tracking import MlflowClient

    key, kind = tracking.EXPERIMENT_KIND
    assert (key, kind) == ("mlflow.experimentKind", "custom_model_development")
    uri = _store(pristine, tmp_path)
    client = MlflowClient(tracking_uri=uri)
    exp_id = tracking.init_experiment(uri, "e", None, tmp_path / "init.json", store_id="s1")
    assert client.get_experiment(exp_id).tags[key] == kind
    receipt = json.loads((tmp_path / "init.json").read_text())
    assert receipt["runs_table"] == (
        f"/#/experiments/{exp_id}/runs?workflowType=machine_learning&viewStateShareKey=ufs-bench-v2"
    )
    # an experiment created before the tag (or by another tool) gets it, its store tag kept;
    # a kind someone chose is kept, and a second initialisation changes nothing
    old = client.create_experiment("old", tags={tracking.STORE_TAG: "s0"})
    chosen = client.create_experiment("chosen", tags={key: "genai_development"})
    for _ in range(2):
        tracking.init_experiment(uri, "old", None, tmp_path / "o.json", store_id="s2")
        tracking.init_experiment(uri, "chosen", None, tmp_path / "c.json", store_id="s3")
        view = {
            f"mlflow.sharedViewState.{tracking.names.SHARED_VIEW_KEY}": json.dumps(
                tracking.SHARED_VIEW
            )
        }
        note = {"mlflow.note.content": tracking.experiment_description(old, uri), **view}
        assert client.get_experiment(old).tags == {tracking.STORE_TAG: "s0", key: kind, **note}
        note = {"mlflow.note.content": tracking.experiment_description(chosen, uri), **view}
        assert client.get_experiment(chosen).tags == {
            key: "genai_development",
            tracking.STORE_TAG: "s3",
            **note,
        }


def test_run_names_lead_with_dataset_method_and_h_and_are_unique(tmp_path, pristine):
    from mlflow.tracking import MlflowClient

    uri = _store(pristine, tmp_path / "a")
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    long = {"coef_normalization": "unit", "lars_method": "lasso", "n_neighbors": 5}
    settings = [
        ("kmeans_ufs", "p1", {"gamma": 10000.0, "nu": 1e-06}),
        ("random", "p2", {}),
        ("mcfs", "p3", long),
        ("udfs", "p4", {"k": 1}),  # the same label as p5's: both fall back to the params id
        ("udfs", "p5", {"k": 1.0}),
    ]
    ev = _evaluations(tmp_path / "c000.json", settings)

    def log(out):
        kw = {"dataset": "toy", "output_dir": out, "data_sha256": "d"}
        return tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)

    def names(out):
        oid = tracking.output_id(out)
        return {
            r.info.run_name: r.info.run_id
            for r in _active(uri, "e")
            if r.data.tags["output_id"] == oid
        }

    assert log(tmp_path / "a")["logged"] == 10
    expected = {
        f"toy/{m}/h={h}/{s}"
        for h in (2, 4)
        for m, s in [
            ("kmeans_ufs", "gamma=10000,nu=1e-06"),
            ("random", "default"),
            ("mcfs", "coen=unit,larm=lasso,nn=5"),  # keys abbreviated: k=v,... too long
            ("udfs", "p4"),
            ("udfs", "p5"),
        ]
    }
    own = names(tmp_path / "a")
    assert set(own) == expected and len(own) == len(_active(uri, "e"))  # distinct
    # a run logged under the former rule (<dataset>/<method>/<pid>/h=<h>, cut before h in
    # the runs table) is renamed, not logged again
    client = MlflowClient(tracking_uri=uri)
    client.update_run(own["toy/random/h=4/default"], name="toy/random/p2/h=4")
    assert log(tmp_path / "a") == {
        "logged": 0,
        "skipped": 10,
        "replaced": 0,
        "removed": 0,
        "retagged": 0,
    }
    assert names(tmp_path / "a") == own
    # another results directory logging into this store: the same settings, distinct names
    b = tmp_path / "b"
    assert log(b)["logged"] == 10
    suffix = f"@b:{tracking.output_id(b)[:6]}"
    assert set(names(b)) == {n + suffix for n in expected}
    assert len({r.info.run_name for r in _active(uri, "e")}) == 20


def test_setting_labels():
    label = tracking.setting_label
    assert label({"n_neighbors": 5, "weight": "heat"}, "p") == "n_neighbors=5,weight=heat"
    assert label({"b": 0.1 + 0.2, "a": True}, "p") == "a=true,b=0.30000000000000004"
    assert label({"x": "y" * 40}, "pid") == "pid" and label({}, "pid") == "default"
    assert tracking.run_name("wine", "mcfs", "20", "k=5") == "wine/mcfs/h=20/k=5"


def test_a_connection_dropped_mid_request_counts_as_unreachable():
    """A server killed while it answers: MLflow reports the dropped connection inside an
    MlflowException's text; the error must still say the server cannot be reached."""
    from mlflow.exceptions import MlflowException

    exc = MlflowException(
        "API request to http://127.0.0.1:9/api/2.0/mlflow/runs/log-batch failed with exception "
        "('Connection aborted.', RemoteDisconnected('Remote end closed connection without "
        "response'))"
    )
    assert tracking.client._unreachable(exc)
    assert "Cannot reach the MLflow tracking server" in str(
        tracking.client._wrap("http://127.0.0.1:9", "logging runs", exc)
    )
    assert not tracking.client._unreachable(MlflowException("RESOURCE_DOES_NOT_EXIST: no such run"))


def test_a_slice_leaves_the_other_methods_runs_alone(tmp_path, pristine):
    # a run of only_methods=[...] logs the slice's evaluations only; it must not
    # delete the runs of the methods it did not evaluate (the next full run would re-log them)
    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    ev_a = _evaluation(tmp_path / "kmeans_ufs.c000.json")
    ev_b = _evaluation(tmp_path / "mcfs.c000.json")
    doc = json.loads(ev_b.read_text())
    doc["evaluations"][0].update(method="mcfs", params={}, pid="m0")
    ev_b.write_text(json.dumps(doc))
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d1"}
    assert (
        tracking.log_evaluations(uri, "e", [ev_a, ev_b], tmp_path / "r.json", **kw)["logged"] == 4
    )
    full = {r.info.run_id for r in _active(uri, "e")}
    sliced = tracking.log_evaluations(uri, "e", [ev_b], tmp_path / "r.json", **kw)
    assert sliced == {"logged": 0, "skipped": 2, "replaced": 0, "removed": 0, "retagged": 0}
    assert {r.info.run_id for r in _active(uri, "e")} == full
    again = tracking.log_evaluations(uri, "e", [ev_a, ev_b], tmp_path / "r.json", **kw)
    assert again["skipped"] == 4 and {r.info.run_id for r in _active(uri, "e")} == full


def test_kept_runs_tags_follow_the_results(tmp_path, pristine):
    """A grid change flips ``in_grid`` without changing the results; the kept
    run's tag must follow, or MLflow's label-tuned set differs from the tables'."""
    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", tmp_path / "art", tmp_path / "init.json")
    ev = _evaluation(tmp_path / "c000.json")
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d1"}
    tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)
    before = {r.info.run_id: r.data.tags["in_grid"] for r in _active(uri, "e")}
    assert set(before.values()) == {"true"}
    doc = json.loads(ev.read_text())
    doc["evaluations"][0]["in_grid"] = False
    ev.write_text(json.dumps(doc))
    counts = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw)
    assert counts == {"logged": 0, "skipped": 2, "replaced": 0, "removed": 0, "retagged": 2}
    after = {r.info.run_id: r.data.tags["in_grid"] for r in _active(uri, "e")}
    assert after.keys() == before.keys() and set(after.values()) == {"false"}


def test_a_moved_output_directory_finds_its_runs_and_artifacts(tmp_path, pristine):
    """The directory (with its own store and artifacts) moved elsewhere logs
    nothing again, keeps its run ids, and its runs' artifacts point to the new place."""
    from mlflow.tracking import MlflowClient

    a, b = tmp_path / "old" / "results", tmp_path / "new" / "place" / "results"
    uri_a = _store(pristine, a)
    art_a = tracking.default_artifact_root(uri_a)
    tracking.init_experiment(uri_a, "e", art_a, a / "mlflow" / "experiment.json")
    ev = _evaluation(a / "c000.json")
    kw = {"dataset": "toy", "data_sha256": "d1"}
    tracking.log_evaluations(uri_a, "e", [ev], a / "r.json", output_dir=a, **kw)
    ids = {r.info.run_id for r in _active(uri_a, "e")}
    tracking.store._dispose_engine(uri_a)
    b.parent.mkdir(parents=True)
    shutil.move(a, b)
    uri_b = tracking.default_tracking_uri(b)
    tracking.init_experiment(
        uri_b, "e", tracking.default_artifact_root(uri_b), b / "mlflow" / "experiment.json"
    )
    counts = tracking.log_evaluations(
        uri_b, "e", [b / "c000.json"], b / "r.json", output_dir=b, **kw
    )
    assert counts["logged"] == counts["removed"] == 0 and counts["skipped"] == 2
    runs = _active(uri_b, "e")
    assert {r.info.run_id for r in runs} == ids
    assert {r.data.tags["output_dir"] for r in runs} == {str(b.resolve())}
    client = MlflowClient(tracking_uri=uri_b)
    exp = client.get_experiment_by_name("e")
    assert exp.artifact_location == (b / "mlflow-artifacts").resolve().as_uri()
    for r in runs:
        assert r.info.artifact_uri.startswith(exp.artifact_location + "/")
        got = client.download_artifacts(r.info.run_id, "selected_features.json", tmp_path)
        assert json.loads(open(got).read()) == list(range(int(r.data.params["h"])))
    assert not (tmp_path / "old" / "results").exists()  # nothing written to the old place


def test_output_identity_is_written_once_and_moves_with_the_directory(tmp_path):
    a = tmp_path / "a"
    a.mkdir()
    first = tracking.output_identity(a)
    assert first == str(a.resolve()) and (a / tracking.IDENTITY_FILE).exists()
    a.rename(tmp_path / "b")
    assert tracking.output_identity(tmp_path / "b") == first
    assert tracking.output_id(tmp_path / "b") == tracking.output_id(tmp_path / "b")
    # keys of a directory that never had the file: as before the file existed (its path)
    c = tmp_path / "c"
    c.mkdir()
    assert tracking.output_identity(c) == str(c.resolve())


def test_resolve_uri_makes_relative_sqlite_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert tracking.resolve_uri("sqlite:///results/mlflow.db") == (
        f"sqlite:///{tmp_path.resolve() / 'results' / 'mlflow.db'}"
    )
    assert tracking.resolve_uri("sqlite:////abs/m.db") == "sqlite:////abs/m.db"
    assert tracking.resolve_uri("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_runs_open_on_what_a_reader_needs(tmp_path, pristine):
    """Parent runs per data set × method, the tables' protocol words, the setting
    the label-tuned table chose, the commit that computed it, the data set input, Duration =
    fit time, and the all-features reference at every h."""
    from mlflow.tracking import MlflowClient

    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", tmp_path / "art", tmp_path / "init.json")
    ev = _evaluations(
        tmp_path / "c.json",
        [("laplacian_score", "p1", {"n_neighbors": 5}), ("laplacian_score", "p2", {})],
    )
    doc = json.loads(ev.read_text())
    doc["evaluations"][0]["git_commit"] = "abc123-dirty"
    doc["evaluations"][1].update(label_free=False, in_grid=True)
    full = {**doc["evaluations"][0], "method": "all_features", "pid": "pa", "params": {}}
    full["kind"] = "full"
    full["results"] = [{**doc["evaluations"][0]["results"][0], "h": None, "h_label": "all"}]
    doc["evaluations"].append(full)
    ev.write_text(json.dumps(doc))
    table = tmp_path / "toy.csv"
    table.write_text(
        "dataset,method,pid,h_label,protocol\n"
        "toy,laplacian_score,p2,2,oracle\ntoy,laplacian_score,p1,4,oracle\n"
        "toy,laplacian_score,p1,2,label_free\nother,laplacian_score,p1,2,oracle\n"
    )
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d" * 64}
    extra = {
        "hs": [2, 4],
        "table": table,
        "data_source": "results/data/toy.npz",
        "data_profile": {"n_samples": 10, "n_features": 4, "n_classes": 2},
    }
    counts = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw, **extra)
    assert counts["logged"] == 6  # 2 settings × 2 h + all_features at each h
    runs = _active(uri, "e")
    parent_runs = _active(uri, "e", parents=True)
    parents = {r.info.run_name: r.info.run_id for r in parent_runs}
    assert set(parents) == {"toy/laplacian_score", "toy/all_features"}
    # a parent lasts its settings' fit time together: 2 settings x 2 h x 0.1 s
    span = {r.info.run_name: r.info.end_time - r.info.start_time for r in parent_runs}
    assert span == {"toy/laplacian_score": 400, "toy/all_features": 100}
    for r in runs:
        assert r.data.tags["mlflow.parentRunId"] == parents[f"toy/{r.data.tags['method']}"]
    by = {(r.data.tags["method"], r.data.tags["params_id"], r.data.params["h"]): r for r in runs}
    assert {k: r.data.tags["selected_by_label_tuning"] for k, r in by.items()} == {
        ("laplacian_score", "p1", "2"): "false",
        ("laplacian_score", "p1", "4"): "true",
        ("laplacian_score", "p2", "2"): "true",
        ("laplacian_score", "p2", "4"): "false",
        ("all_features", "pa", "2"): "false",
        ("all_features", "pa", "4"): "false",
    }
    assert by["laplacian_score", "p1", "2"].data.tags["protocol"] == "label-free"
    assert by["laplacian_score", "p2", "2"].data.tags["protocol"] == "label-tuned"
    assert by["laplacian_score", "p1", "2"].data.tags["mlflow.source.git.commit"] == "abc123"
    assert by["laplacian_score", "p1", "2"].data.tags["git_commit"] == "abc123-dirty"
    assert by["all_features", "pa", "4"].data.tags["h_all"] == "true"
    # a description that names the method, h, protocol and setting
    assert (
        by["laplacian_score", "p1", "2"]
        .data.tags["mlflow.note.content"]
        .startswith(
            "laplacian_score on toy, h = 2. Protocol label-free: the method's documented default "
            "setting, no labels used. Setting p1: n_neighbors = 5."
        )
    )
    assert (
        "Protocol label-tuned" in by["laplacian_score", "p2", "4"].data.tags["mlflow.note.content"]
    )
    assert (
        by["all_features", "pa", "2"]
        .data.tags["mlflow.note.content"]
        .startswith("all_features on toy, all features (shown at h = 2).")
    )
    for r in runs:
        (di,) = r.inputs.dataset_inputs
        assert di.dataset.name == "toy" and json.loads(di.dataset.profile)["n_features"] == 4
        assert r.info.end_time - r.info.start_time == 100  # fit_seconds 0.1
    # a second pass keeps every run and parent
    again = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw, **extra)
    assert again["logged"] == 0 and again["skipped"] == 6
    assert {r.info.run_id for r in _active(uri, "e", parents=True)} == set(parents.values())
    # the label-tuned choice changes (a new grid): only the tags move
    table.write_text("dataset,method,pid,h_label,protocol\ntoy,laplacian_score,p1,2,oracle\n")
    moved = tracking.log_evaluations(uri, "e", [ev], tmp_path / "r.json", **kw, **extra)
    assert moved["logged"] == 0 and moved["retagged"] == 3
    client = MlflowClient(tracking_uri=uri)
    assert (
        client.get_run(by["laplacian_score", "p1", "2"].info.run_id).data.tags[
            "selected_by_label_tuning"
        ]
        == "true"
    )


def test_runs_table_hint_reads_the_receipt(tmp_path):
    receipt = tmp_path / "experiment.json"
    assert tracking.runs_table_hint(receipt) is None
    path = tracking.runs_table_path("3")  # from the experiment id: the current link
    receipt.write_text(json.dumps({"tracking_uri": "sqlite:////x/m.db", "experiment_id": "3"}))
    assert tracking.runs_table_hint(receipt) == (
        "MLflow runs table: run `mlflow ui --backend-store-uri sqlite:////x/m.db`, then open "
        f"http://127.0.0.1:5000{path}"
    )
    receipt.write_text(json.dumps({"tracking_uri": "http://h:5000/", "experiment_id": "3"}))
    assert tracking.runs_table_hint(receipt) == f"MLflow runs table: http://h:5000{path}"


def test_a_directory_moved_before_identities_existed_adopts_its_runs(tmp_path, pristine):
    """Results logged before the identity file existed, then moved with their own store:
    the first pass adopts the old path as the identity, so no run is logged twice."""
    a, b = tmp_path / "a", tmp_path / "b"
    uri_a = _store(pristine, a)
    tracking.init_experiment(uri_a, "e", None, a / "mlflow" / "experiment.json")
    ev = _evaluation(a / "c000.json")
    kw = {"dataset": "toy", "data_sha256": "d1"}
    tracking.log_evaluations(uri_a, "e", [ev], a / "r.json", output_dir=a, **kw)
    ids = {r.info.run_id for r in _active(uri_a, "e")}
    (a / tracking.IDENTITY_FILE).unlink()  # as results written before the file existed
    tracking.store._dispose_engine(uri_a)
    shutil.move(a, b)
    uri_b = tracking.default_tracking_uri(b)
    counts = tracking.log_evaluations(
        uri_b, "e", [b / "c000.json"], b / "r.json", output_dir=b, **kw
    )
    assert counts["logged"] == 0 and {r.info.run_id for r in _active(uri_b, "e")} == ids
    assert tracking.output_identity(b) == str(a.resolve())


def test_metrics_are_logged_to_four_significant_digits(tmp_path, pristine):
    """The runs table showed 6+ digits. MLflow gets 4 significant digits (the
    evaluation files keep full precision); the shared view leads with data set, method and
    h and sorts by data set."""
    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", tmp_path / "art", tmp_path / "init.json")
    ev = _evaluation(tmp_path / "c.json", hs=(2,))
    doc = json.loads(ev.read_text())
    doc["evaluations"][0]["results"][0].update(acc_mean=0.123456789, fit_seconds=0.0123456)
    ev.write_text(json.dumps(doc))
    tracking.log_evaluations(
        uri,
        "e",
        [ev],
        tmp_path / "r.json",
        dataset="toy",
        output_dir=tmp_path,
        data_sha256="d" * 64,
    )
    (run,) = _active(uri, "e")
    assert run.data.metrics["acc_mean"] == 0.1235
    assert run.data.metrics["fit_seconds"] == 0.01235
    # the objective curve is a history; each restart's values are in the artifact only
    client = tracking.client._client(uri)
    curve = client.get_metric_history(run.info.run_id, "objective")
    assert [m.value for m in sorted(curve, key=lambda m: m.step)] == [3.0, 2.0, 1.5]
    assert not any(k.endswith("_per_restart") for k in run.data.metrics)
    local = client.download_artifacts(run.info.run_id, "evaluation.json", str(tmp_path))
    logged = json.loads(Path(local).read_text())["results"][0]["per_restart"]
    assert logged == {"acc": [0.5, 0.6], "nmi": [0.4, 0.4]}
    cols = tracking.SHARED_VIEW["selectedColumns"]
    assert cols[:3] == ["params.`dataset`", "params.`method`", "params.`h`"]
    assert tracking.SHARED_VIEW["orderByKey"] == "params.`dataset`"


def test_setting_labels_stay_readable():
    """102 of 413 runs were named by a hash; the default grids now all read."""
    mcfs = {"coef_normalization": "unit", "lars_method": "lasso", "n_neighbors": 5}
    mcfs |= {"ridge": 0.001, "weight": "heat"}
    assert tracking.setting_label(mcfs, "ab347419a1") == (
        "coen=unit,larm=lasso,nn=5,rid=0.001,wei=heat"
    )
    golfs = {"alpha": 1.0, "beta": 100.0, "gamma": 100.0, "kappa": 1.0, "lam": 0.1}
    assert tracking.setting_label(golfs, "p") == "alp=1,bet=100,gam=100,kap=1,lam=0.1"
    assert tracking.setting_label({"n_neighbors": 5}, "p") == "n_neighbors=5"
    assert tracking.setting_label({f"key_{i}": "x" * 9 for i in range(6)}, "pid7") == "pid7"


METRICS = ("acc", "nmi", "ari", "ne")


def test_a_chance_reference_is_one_run_per_h_with_the_tables_pooled_numbers(tmp_path, pristine):
    """Issue 39: ``random``'s draws (30 runs per h, half of a default run's runs) are one
    run per h whose metrics are the results table's pooled row (one formula:
    :func:`ufs.reference_draws.pool_draws`), each draw's mean a history step; a method
    without a draw parameter (and a ``random`` fitted without one) stays a run per setting."""
    from ufs.report.results_table import collect, select_protocols

    uri = _store(pristine, tmp_path)
    tracking.init_experiment(uri, "e", None, tmp_path / "init.json")
    rng = np.random.default_rng(3)
    doc = json.loads(_evaluation(tmp_path / "c000.json").read_text())
    template = doc["evaluations"][0]

    def scored(row):
        per = {m: rng.uniform(0.1, 0.6, size=4).round(6).tolist() for m in METRICS}
        means = {f"{m}_mean": float(np.mean(v)) for m, v in per.items()}
        return {**row, **means, "per_restart": per, "fit_status": "ok", "objective_curve": None}

    # kmeans_ufs: one setting
    evs = [
        {**template, "params": {}, "restarts": 4, "results": list(map(scored, template["results"]))}
    ]
    for d in range(5):
        rows = [scored(row) for row in template["results"]]
        evs.append(
            {
                **template,
                "method": "random",
                "kind": "subset",
                "pid": f"d{d}",
                "params": {"draw": d},
                "restarts": 4,
                "results": rows,
            }
        )
    path = tmp_path / "c000.json"
    path.write_text(json.dumps({"dataset": "toy", "evaluations": evs}))
    kw = {"dataset": "toy", "output_dir": tmp_path, "data_sha256": "d"}
    assert tracking.log_evaluations(uri, "e", [path], tmp_path / "r.json", **kw)["logged"] == 4
    runs = {r.info.run_name: r for r in _active(uri, "e")}
    assert set(runs) == {
        "toy/kmeans_ufs/h=2/default",
        "toy/kmeans_ufs/h=4/default",
        "toy/random/h=2/draws=5",
        "toy/random/h=4/draws=5",
    }
    table = select_protocols(collect([path], "toy"))
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    for h in (2, 4):
        run = runs[f"toy/random/h={h}/draws=5"]
        assert run.data.tags["n_draws"] == "5" and "draw" not in run.data.tags
        assert run.data.tags["role"] == "reference"
        assert run.data.tags["input_space"] == "standardized"
        assert run.data.params["param.draws"] == "5"
        assert "5 seeded draws (draw = 0..4)" in run.data.tags["mlflow.note.content"]
        (pooled,) = table.query(
            f"method == 'random' and h == {h} and protocol == 'label_free'"
        ).to_dict("records")
        for m in METRICS:
            for stat in ("mean", "std", "p05", "p95"):
                assert run.data.metrics[f"{m}_{stat}"] == pytest.approx(
                    pooled[f"{m}_{stat}"], rel=1e-3
                ), (m, stat)
        history = client.get_metric_history(run.info.run_id, "acc_per_draw")
        draws = [e for e in evs if e["method"] == "random"]
        assert [x.step for x in sorted(history, key=lambda x: x.step)] == list(range(5))
        assert [x.value for x in sorted(history, key=lambda x: x.step)] == pytest.approx(
            [e["results"][(2, 4).index(h)]["acc_mean"] for e in draws], rel=1e-3
        )
    # a second pass logs nothing again (the pooled run's result hash is stable)
    counts = tracking.log_evaluations(uri, "e", [path], tmp_path / "r.json", **kw)
    assert counts["logged"] == 0 and counts["skipped"] == 4


def test_a_local_store_commits_without_waiting_for_the_disk(tmp_path):
    """The store's connections run ``PRAGMA synchronous = OFF`` (a run's ~1 000
    commits no longer wait for fsync); another SQLite database keeps SQLite's default."""
    from sqlalchemy import create_engine

    from ufs.tracking.client import _client

    db = tmp_path / "mlflow.db"
    client = _client(f"sqlite:///{db}")
    client.search_experiments()  # the store exists now
    engine = client._tracking_client.store.engine
    engine.dispose()
    with engine.connect() as con:
        assert con.exec_driver_sql("PRAGMA synchronous").scalar() == 0
    other = create_engine(f"sqlite:///{tmp_path / 'other.db'}")
    with other.connect() as con:
        assert con.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
