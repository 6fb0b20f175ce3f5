"""What the data sets a benchmark run has not reached would cost: a per-method
model of the CPU time of one fit, fitted on the run's own measured fits, and its
prediction for every missing data set under the run's budget rule.

Model. For each method, over its label-free fits that finished within the budget,

    log t = a + α log n + β log p + γ log h      (γ = 0 for methods that fit once),

least squares in the logs (``n`` samples, ``p`` non-constant features, ``h`` the number of
features the fit selects; ``t`` the fit's CPU seconds: the evaluation's recorded CPU time
shared over its h values in proportion to their wall times). A method whose fits span
fewer than 4 data sets, or whose design is singular, gets the simpler ``log t = a + α log
(n p)``; with 1 data set, its median. The k-means evaluation gets one model over every
evaluation: ``log t = a + α log n + β log Σh + γ log c``.

Prediction for a missing data set (its shape from the registry, its h grid from the
config): every fit is clipped at the budget; once a fit of a setting is predicted over it,
the setting's larger h are skipped at no cost (the workflow's rule,
:func:`ufs.pipeline.steps._fit_task`). The estimate is an extrapolation in ``n`` and ``p``
(the measured data sets are the small ones), hence a rough figure: the report gives it
with the leave-one-data-set-out error of the fit model on the measured fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..fileio import read_json

__all__ = [
    "fit_costs",
    "CostModel",
    "fit_cost_model",
    "estimate_missing",
    "missing_shapes",
    "held_out_ratios",
]


def fit_costs(evaluation_files: list[str | Path], shapes: dict[str, tuple]) -> pd.DataFrame:
    """One row per label-free fit: ``dataset``, ``method``, ``kind``, ``n``, ``p``, ``c``,
    ``h`` (``None`` for methods that fit once), ``cpu`` (seconds) and ``exceeded``; plus
    one row per evaluation of k-means cost (``method = "<kmeans>"``, ``h`` = Σh)."""
    rows = []
    for path in evaluation_files:
        for ev in read_json(path)["evaluations"]:
            base = ev.get("dataset_base", ev["dataset"])
            if base not in shapes or None in shapes[base]:
                continue
            n, p, c = shapes[base]
            results = ev["results"]
            hs = [r["h"] for r in results]
            rows.append(
                {
                    "dataset": base,
                    "method": "<kmeans>",
                    "kind": "kmeans",
                    "n": n,
                    "p": p,
                    "c": c,
                    "h": float(sum(hs)),
                    "cpu": float(ev.get("kmeans_cpu_seconds") or 0.0),
                    "exceeded": False,
                    "label_free": bool(ev.get("label_free")),
                }
            )
            if not ev.get("label_free"):
                continue
            # CPU time where recorded (every evaluation of this version), else wall time
            total = ev.get("fit_cpu_seconds_total")
            if total is None:
                total = sum(float(r.get("fit_seconds") or 0.0) for r in results)
            exceeded = [r.get("fit_status") == "budget_exceeded" for r in results]
            if ev["kind"] != "subset":  # one fit serves every h
                rows.append(
                    {
                        "dataset": base,
                        "method": ev["method"],
                        "kind": ev["kind"],
                        "n": n,
                        "p": p,
                        "c": c,
                        "h": None,
                        "cpu": float(total),
                        "exceeded": any(exceeded),
                        "label_free": True,
                    }
                )
                continue
            wall = np.array([float(r.get("fit_seconds") or 0.0) for r in results])
            share = wall / wall.sum() if wall.sum() > 0 else np.full(len(wall), 1 / len(wall))
            for r, s, x in zip(results, share, exceeded, strict=True):
                rows.append(
                    {
                        "dataset": base,
                        "method": ev["method"],
                        "kind": "subset",
                        "n": n,
                        "p": p,
                        "c": c,
                        "h": float(r["h"]),
                        "cpu": float(total) * s,
                        "exceeded": x,
                        "label_free": True,
                    }
                )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CostModel:
    """``log t = coef · features`` per method (see the module docstring)."""

    coef: dict[str, np.ndarray]
    form: dict[str, str]  # "full", "np" or "median"
    loo_log_error: dict[str, float]  # median |log(predicted / measured)|, leave-one-out

    def predict(self, method: str, n: int, p: int, c: int, h: float | None) -> float:
        coef = self.coef[method]
        if self.form[method] == "full" and len(coef) == 3:  # fitted on fits made once for all h
            h = None
        return float(np.exp(_features(self.form[method], n, p, c, h) @ coef))


def _features(form: str, n, p, c, h) -> np.ndarray:
    if form == "median":
        return np.array([1.0])
    if form == "np":
        return np.array([1.0, np.log(n * p)])
    if form == "kmeans":
        return np.array([1.0, np.log(n), np.log(h), np.log(c)])
    x = [1.0, np.log(n), np.log(p)]
    return np.array(x + ([np.log(h)] if h is not None and not np.isnan(h) else []))


def _fit(d: pd.DataFrame, form: str) -> np.ndarray:
    X = np.array([_features(form, r.n, r.p, r.c, r.h) for r in d.itertuples()])
    y = np.log(np.maximum(d["cpu"].to_numpy(), 1e-4))
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return coef


def _form(d: pd.DataFrame, method: str) -> str:
    if method == "<kmeans>":
        return "kmeans"
    n_sets = d["dataset"].nunique()
    if n_sets >= 4:
        X = np.array([_features("full", r.n, r.p, r.c, r.h) for r in d.itertuples()])
        if np.linalg.matrix_rank(X) == X.shape[1]:
            return "full"
    return "np" if n_sets >= 2 else "median"


def fit_cost_model(costs: pd.DataFrame, loo: bool = True) -> CostModel:
    """The per-method models, on fits that finished within the budget (a stopped fit's
    time is censored: it says only that the fit takes longer); ``loo=False`` skips the
    leave-one-data-set-out error (``nan``)."""
    coef, form, loo_err = {}, {}, {}
    for method, d in costs[~costs["exceeded"] & (costs["cpu"] > 0)].groupby("method"):
        form[method] = _form(d, method)
        coef[method] = _fit(d, form[method])
        if not loo:
            loo_err[method] = float("nan")
            continue
        errs = []
        for ds in d["dataset"].unique():  # leave one data set out
            train, test = d[d["dataset"] != ds], d[d["dataset"] == ds]
            if train["dataset"].nunique() < 2:
                continue
            f = _form(train, method)
            c = _fit(train, f)
            pred = np.array([_features(f, r.n, r.p, r.c, r.h) @ c for r in test.itertuples()])
            errs += list(np.abs(pred - np.log(np.maximum(test["cpu"].to_numpy(), 1e-4))))
        loo_err[method] = float(np.median(errs)) if errs else float("nan")
    return CostModel(coef, form, loo_err)


def estimate_missing(
    model: CostModel,
    missing: dict[str, tuple[int, int, int, list[int]]],
    methods: dict[str, tuple[str, int]],
    budget: float,
) -> pd.DataFrame:
    """Predicted CPU seconds per missing data set: ``missing`` maps a data set to ``(n, p,
    c, hs)``, ``methods`` a method to ``(kind, settings)`` (``ranking``, ``subset`` or
    ``full``; its number of label-free settings: the draws of ``random``). Columns:
    ``dataset``, ``fit_cpu``, ``kmeans_cpu``, ``over_budget`` (methods predicted to stop
    at the budget), ``unmodelled`` (methods without a model)."""
    rows = []
    for ds, (n, p, c, hs) in missing.items():
        fit = kmeans = 0.0
        over, unmodelled = [], []
        for method, (kind, settings) in sorted(methods.items()):
            if method not in model.coef:
                unmodelled.append(method)
                continue
            for h in [None] if kind != "subset" else sorted(hs):
                t = model.predict(method, n, p, c, h)
                if t > budget:
                    fit += settings * budget
                    over.append(method)
                    break
                fit += settings * t
            if "<kmeans>" in model.coef:
                kmeans += settings * model.predict("<kmeans>", n, p, c, float(sum(hs)))
        rows.append(
            {
                "dataset": ds,
                "n": n,
                "p": p,
                "c": c,
                "fit_cpu": fit,
                "kmeans_cpu": kmeans,
                "over_budget": over,
                "unmodelled": unmodelled,
            }
        )
    return pd.DataFrame(rows)


def missing_shapes(missing: list[str], config: dict[str, Any]) -> dict[str, tuple]:
    """``(n, p, c, hs)`` of registered missing data sets (the registry's shape, the
    config's h grid); data sets the registry does not know are left out."""
    from ..datasets import get_dataset
    from .config import resolve_h

    out = {}
    for d in missing:
        try:
            spec = get_dataset(d)
        except ValueError:
            continue
        hs = resolve_h(((config.get("datasets") or {}).get(d) or {}).get("h"), spec.n_features)
        out[d] = (spec.n_samples, spec.n_features, spec.n_classes, list(hs))
    return out


def held_out_ratios(
    costs: pd.DataFrame,
    hs: dict[str, list[int]],
    methods: dict[str, tuple[str, int]],
    budget: float,
    datasets: list[str] | None = None,
) -> pd.DataFrame:
    """The estimate checked where the answer is known: each measured data set (of
    ``datasets``, default all in ``costs``) is held out, the models are fitted on the
    others' fits and its label-free CPU time is predicted as for a missing set (``hs`` its
    h grid) and compared with what it took (its label-free fits and their k-means).
    Columns ``dataset``, ``n``, ``p``, ``estimated``, ``measured`` (CPU seconds) and
    ``ratio`` (measured / estimated)."""
    rows = []
    for ds in datasets if datasets is not None else sorted(costs["dataset"].unique()):
        own = costs[costs["dataset"] == ds]
        if own.empty or ds not in hs:
            continue
        n, p, c = (int(own.iloc[0][k]) for k in ("n", "p", "c"))
        model = fit_cost_model(costs[costs["dataset"] != ds], loo=False)
        est = estimate_missing(model, {ds: (n, p, c, hs[ds])}, methods, budget).iloc[0]
        estimated = float(est["fit_cpu"] + est["kmeans_cpu"])
        measured = float(own.loc[own["label_free"], "cpu"].sum())
        rows.append(
            {
                "dataset": ds,
                "n": n,
                "p": p,
                "estimated": estimated,
                "measured": measured,
                "ratio": measured / estimated if estimated > 0 else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "n", "p", "estimated", "measured", "ratio"])
