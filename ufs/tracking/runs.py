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
  store, and a moved directory finds its runs (:func:`init_experiment` points a
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
* Against a tracking server (``http(s)://``, docs/guide/mlflow-server.md) the server owns the
  artifact store: experiments are created without a client-side artifact location, so
  artifacts are uploaded through the server (``mlflow-artifacts:/``) and not written to
  a path only this machine can see. HTTP requests fail fast (see the environment
  defaults below) and errors name the server, so a down server costs seconds per job.
  A server's store is not inspected at planning time.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from ..fileio import to_jsonable, write_json
from ..pipeline.io import read_evaluations
from .client import STORE_TAG, TrackingError, _client, _retry_locked, _search, _sqlite_path, _wrap
from .identity import _id_of, _run_key_of, _store_identity, output_identity, setting_key
from .names import _rounded, _run_names, run_description

__all__ = ["log_evaluations", "label_tuned_picks", "data_profile", "PARENT_TAG", "logged_pid"]


def _result_hash(ev: dict[str, Any], row: dict[str, Any]) -> str:
    core = {k: row[k] for k in row if k not in ("fit_seconds", "fit_info", "fit_warnings")}
    blob = json.dumps(to_jsonable([core, ev["code_version"]]), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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
    """A run's metrics: the summaries (4 significant digits), the fit's facts, a pooled
    chance reference's per-draw means and the objective curve as histories. The values
    of each k-means restart are in the run's ``evaluation.json`` artifact, not metric
    histories: they were two thirds of a run's metric rows and ~17 % of its logging time
    in the SQLite store, for a chart whose x axis (the restart) orders nothing."""
    from mlflow.entities import Metric

    out = []
    for k, v in row.items():
        if k.endswith(("_mean", "_std", "_p05", "_p95")) and v is not None:
            out.append(Metric(k, _rounded(v), ts, 0))
    if row.get("n_draws"):
        out.append(Metric("n_draws", float(row["n_draws"]), ts, 0))
    for k in ("tp", "cp", "fit_seconds"):
        if row.get(k) is not None:
            out.append(Metric(f"{k}_at_h" if k in ("tp", "cp") else k, _rounded(row[k]), ts, 0))
    for k, v in (row.get("fit_info") or {}).items():
        if isinstance(v, bool | int | float):
            out.append(Metric(f"fit_{k}", float(v), ts, 0))
    for m, vals in (row.get("per_draw") or {}).items():  # a pooled chance reference
        out.extend(Metric(f"{m}_per_draw", _rounded(v), ts, i) for i, v in enumerate(vals))
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


def _artifact_repository(client, run):
    """The artifact repository of ``run`` (just created): what ``client.log_artifacts``
    uses, found from the run's own ``artifact_uri`` instead of a ``get_run`` query per run
    (~10 % of a run's logging time in the SQLite store)."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    return get_artifact_repository(run.info.artifact_uri, tracking_uri=client.tracking_uri)


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
        _artifact_repository(client, run).log_artifacts(tmp)
    fit_ms = int(1000 * float(row.get("fit_seconds") or 0.0))
    client.set_terminated(rid, "FINISHED", end_time=ts + max(fit_ms, 0))
    return rid


#: tag of a parent run (one per data set × method, grouping its settings' runs)
PARENT_TAG = "ufs.parent"


def _logged_rows(ev: dict[str, Any], hs: list[int] | None):
    """The rows of an evaluation as runs: a method that uses every feature (``h_label``
    ``all``) is logged once per h of the data set, with the same numbers, so that a filter
    on ``params.h`` keeps the all-features reference beside the methods."""
    for row in ev["results"]:
        if row["h_label"] == "all" and hs:
            for h in hs:
                yield {**row, "h": h, "h_label": str(h), "uses_all_features": True}
        else:
            yield row


#: the params id of a chance reference's pooled runs (its draws: one run per h)
POOLED_PID = "draws"


def draw_param(method: str, params: dict[str, Any]) -> str:
    """The name of the draw parameter of a chance reference's draw (the registry's
    ``draws=``), or "" for any other setting (and a reference fitted without one)."""
    from ..registry import get_method

    try:
        name = get_method(method).draws
    except ValueError:  # a method of another code version
        return ""
    return name if name and name in (params or {}) else ""


def logged_pid(method: str, pid: str, params: dict[str, Any]) -> str:
    """The params id a setting's runs are logged under (part of their run keys):
    :data:`POOLED_PID` for a chance reference's draw, whose draws share one run per h
    (:func:`_pooled_draws`), else its own ``pid``."""
    return POOLED_PID if draw_param(method, params) else pid


def _pooled_draws(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evaluations as runs are logged: a chance reference's draws (``random``'s
    ``evaluation.reference_draws`` seeded subsets) pooled into one evaluation, one run per
    h, as the results tables pool them (:func:`ufs.reference_draws.pool_draws`: the expected
    score, the std over every restart of every draw, the 5-95 % band of one draw, and each
    draw's mean as the history ``<metric>_per_draw``, step = draw). The 30
    draws were 30 runs per h, half of a default run's runs and of its logging time, and a
    runs table in which one reference filled most rows with single draws."""
    from ..pipeline.status import worst
    from ..reference_draws import pool_draws

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    out = []
    for ev in evs:
        param = draw_param(ev["method"], ev.get("params") or {})
        if param:
            groups.setdefault((ev["method"], param), []).append(ev)
        else:
            out.append(ev)
    for (_, param), draws in groups.items():
        draws = sorted(draws, key=lambda e: e["params"][param])
        first = draws[0]
        by_h: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for ev in draws:
            for row in ev["results"]:
                by_h.setdefault(row["h_label"], []).append((ev["params"][param], row))
        rows = []
        for h_label, drawn in by_h.items():
            metrics = sorted({m for _, r in drawn for m in r["per_restart"]})
            row: dict[str, Any] = {"h": drawn[0][1]["h"], "h_label": h_label}
            per_draw = {}
            for m in metrics:
                means = [r.get(f"{m}_mean") for _, r in drawn]
                means = [float("nan") if v is None else v for v in means]
                pooled = pool_draws(means, [r["per_restart"].get(m, []) for _, r in drawn])
                row.update({f"{m}_{k}": pooled[k] for k in ("mean", "std", "p05", "p95")})
                per_draw[m] = means
            row["n_draws"] = len(drawn)
            row["per_draw"] = per_draw
            row["per_restart"] = {}
            seconds = [float(r.get("fit_seconds") or 0.0) for _, r in drawn]
            row["fit_seconds"] = sum(seconds) / len(seconds)
            row["fit_status"] = worst([str(r.get("fit_status") or "ok") for _, r in drawn])
            row["draws"] = [d for d, _ in drawn]
            row["selected"] = [r["selected"] for _, r in drawn]
            rows.append(row)
        out.append(
            {
                **{k: v for k, v in first.items() if k != "results"},
                "pid": POOLED_PID,
                "params": {"draws": len(draws)},
                "draw_param": param,
                "draw_params": first["params"],
                "results": rows,
            }
        )
    return out


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
    (``fit_ms[method]``, milliseconds; parents showed the ~50 ms their creation
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
    evs = _pooled_draws(evs)  # after fit_ms: a parent lasts every draw's fit
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
            **({"n_draws": str(row["n_draws"])} if row.get("n_draws") else {}),
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
    # part and leaves every other method's runs as they are
    stale = [r for runs in existing.values() for r in runs if r.data.tags.get("method") in roles]
    for r in stale + old:
        client.delete_run(r.info.run_id)
        counts["removed"] += 1
    return keys, counts


def _refresh_tags(client, run, tags: dict[str, str]) -> bool:
    """Set the tags of a kept run that differ from what the results say now (a
    grid change flips ``in_grid`` without changing the results; a moved directory
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

    # a pooled chance reference: the facts of its first draw, without the draw tag
    facts = method_facts(ev["method"], ev.get("draw_params") or ev.get("params") or {})
    if ev.get("draw_params"):
        facts["draw"] = float("nan")
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
