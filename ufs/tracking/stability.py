"""Selection stability in MLflow: each ``(data set, method)`` parent run (made by
:func:`ufs.tracking.runs.log_evaluations`) gets the metrics ``stability``,
``stability_low`` and ``stability_high`` of its stability file
(:mod:`ufs.pipeline.stability_step`), and the tags ``stability_h``, ``stability_m``,
``stability_status`` (and ``stability_reason`` when it could not be computed).

Idempotent: a metric already equal to the file's value is not logged again, so a
re-run adds no metric history. Only this output directory's parent runs are touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..fileio import read_json, write_json
from .client import TrackingError, _client, _retry_locked, _search, _wrap
from .identity import _run_key_of, output_identity

__all__ = ["log_stability", "STABILITY_METRICS"]

STABILITY_METRICS = ("stability", "stability_low", "stability_high")


def _pass(client, exp_id: str, records, *, dataset: str, identity: str, data_hash: str):
    out: dict[str, str] = {}
    logged = 0
    for rec in records:
        method = rec["method"]
        key = _run_key_of(f"parent|{dataset}|{method}", identity, data_hash)
        runs = [
            r
            for r in _search(client, exp_id, f"tags.run_key = '{key}'")
            if r.info.status == "FINISHED"
        ]
        if not runs:
            raise TrackingError(
                f"no MLflow parent run of {dataset}/{method} in this output directory (run key "
                f"{key}): the data set's logging job makes it, and runs before this one"
            )
        run = runs[0]
        for name in STABILITY_METRICS:
            value = rec.get(name)
            if value is None:
                continue
            if run.data.metrics.get(name) != float(value):
                client.log_metric(run.info.run_id, name, float(value), step=0)
                logged += 1
        tags = {
            "stability_h": str(rec["h"]),
            "stability_m": str(rec["m"]),
            "stability_status": str(rec.get("status", "ok")),
        }
        if rec.get("stability") is None:
            tags["stability_reason"] = str(rec.get("reason", "not computed"))
        for name, value in tags.items():
            if run.data.tags.get(name) != value:
                client.set_tag(run.info.run_id, name, value)
        out[method] = run.info.run_id
    return out, logged


def log_stability(
    uri: str,
    experiment: str,
    files: list[str | Path],
    receipt: str | Path,
    *,
    dataset: str,
    output_dir: str | Path,
    data_sha256: str,
) -> dict[str, Any]:
    """Put the stability of each file (one method on ``dataset``) on its parent run and
    write a receipt of the run ids."""
    try:
        client = _client(uri)
        exp = _retry_locked(lambda: client.get_experiment_by_name(experiment))
    except Exception as exc:
        raise _wrap(uri, "looking up the experiment", exc) from exc
    if exp is None:
        raise TrackingError(f"MLflow experiment {experiment!r} does not exist in {uri!r}")
    records = [read_json(f) for f in files]
    identity = output_identity(Path(output_dir).resolve())
    try:
        runs, logged = _retry_locked(
            lambda: _pass(
                client,
                exp.experiment_id,
                records,
                dataset=dataset,
                identity=identity,
                data_hash=data_sha256,
            )
        )
    except TrackingError:
        raise
    except Exception as exc:
        raise _wrap(uri, f"logging the stability of {dataset!r}", exc) from exc
    result = {"dataset": dataset, "runs": runs, "metrics_logged": logged}
    write_json(receipt, result)
    return result
