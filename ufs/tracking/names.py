"""What the MLflow UI shows (from ``ufs.bench.tracking``): run names and
descriptions, setting labels, the shared runs-table view and the link to it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..fileio import read_json, to_jsonable
from .client import _is_server

#: longest readable setting label (``k=v,...``) in a run name; longer: the keys abbreviated
SETTING_LABEL_MAX = 30


#: longest setting label with abbreviated keys; longer: the params id
ABBREVIATED_LABEL_MAX = 48


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
    # the full data set / method / h first (the name column cuts run names at
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


#: significant digits of the metrics logged to MLflow (6+ digits); the
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


def _draw_range(draws) -> str:
    """``0..29`` for consecutive draws, else the draws listed."""
    draws = sorted(draws or [])
    if draws and draws == list(range(draws[0], draws[0] + len(draws))):
        return f"{draws[0]}..{draws[-1]}" if len(draws) > 1 else str(draws[0])
    return ", ".join(map(str, draws))


def run_description(ev: dict[str, Any], row: dict[str, Any]) -> str:
    """A run's description (its page's note; it read "dataset wine, setting
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
    if row.get("n_draws"):  # a chance reference's draws pooled into one run
        return (
            f"{ev['method']} on {ev['dataset']}, {h}: the expected score of "
            f"{row['n_draws']} seeded draws ({ev.get('draw_param', 'draw')} = "
            f"{_draw_range(row.get('draws'))}), each the mean over {ev['restarts']} k-means restarts "
            f"(seed {ev['seed']}). <metric>_mean: the mean of the draws' means; _std: over "
            "every restart of every draw; _p05 / _p95: the band of one draw; "
            "<metric>_per_draw: each draw's mean (step = draw). Protocol label-free: no "
            f"labels used. Fit status: {row.get('fit_status') or 'ok'}."
        )
    return (
        f"{ev['method']} on {ev['dataset']}, {h}. Protocol {protocol}. Setting "
        f"{ev['pid']}: {setting}. Fit status: {row.get('fit_status') or 'ok'}. "
        f"Scores: mean over {ev['restarts']} k-means restarts (seed {ev['seed']})."
    )
