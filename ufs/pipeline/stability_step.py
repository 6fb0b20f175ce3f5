"""The stability step: one method's label-free setting fitted on ``m`` seeded subsamples
of a data set at one declared ``h``, and the selections' stability (:mod:`ufs.stability`).

Protocol (config ``stability``): ``m`` subsamples (default 10) of ``fraction`` of the
samples (default 0.9), drawn without replacement, draw ``i`` from
``SeedSequence([seed, i])`` with the data set instance's seed; the middle value of the data
set's ``h`` list (``h: middle``, the default) or a given ``h`` clipped to it; the method's
label-free setting with the same ``random_state`` as its fit, so that only the samples
change. The rows are taken from the data step's matrices (z-scored on all samples: the
subsample is not re-standardized, as a practitioner's subsample of a standardized table
would not be); a graph method builds its kNN graph on the subsample. Every fit runs under
the per-fit CPU budget. A fit over budget ends the step without a stability (its reason
is recorded); fits flagged as not converged, diverged or degenerate are counted and the
stability is marked.

Nothing here is imported by the fit or evaluation steps: their code versions (the
evaluations' lineage) do not depend on this module.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..base import ConstantFeaturesWarning
from ..fileio import write_json
from ..preprocessing import input_matrix
from ..registry import get_method, make_estimator
from ..stability import selection_matrix, stability, subsample_rows
from .budget import BUDGET_ERRORS, budget_reason, fit_budget
from .config_checks import config_flag
from .status import fit_status, worst
from .steps import _scalar_attributes, fixed_iteration_budget, load_data

__all__ = [
    "STABILITY_DEFAULTS",
    "run_stability",
    "stability_config",
    "stability_h",
    "stability_jobs",
    "stability_settings",
]

#: config ``stability`` defaults
STABILITY_DEFAULTS = {
    "enabled": True,
    "m": 10,
    "fraction": 0.9,
    "h": "middle",
    "level": 0.95,
    "datasets": None,  # every data set of the plan; or a list of them (by registry name)
}


def stability_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config's ``stability`` section with its defaults (``enabled`` as a bool: a
    ``--config stability='{enabled: false}'`` may give a string)."""
    out = {**STABILITY_DEFAULTS, **(config.get("stability") or {})}
    out["enabled"] = config_flag(out["enabled"], True)
    return out


def stability_h(hs, declared: Any = "middle") -> int:
    """The ``h`` of a data set's stability: the middle of its ``h`` list (the lower middle
    of an even list), or ``declared`` itself when it is one of them."""
    hs = sorted(int(h) for h in hs)
    if declared == "middle" or declared is None:
        return hs[(len(hs) - 1) // 2]
    if int(declared) not in hs:
        raise ValueError(f"stability.h = {declared} is not one of the data set's h {hs}")
    return int(declared)


def stability_settings(plan) -> dict[str, Any]:
    """``{method: setting}``: the label-free setting of every method of ``plan`` that
    selects (not a reference, not a full method)."""
    out = {}
    for method, settings in plan.settings.items():
        spec = get_method(method)
        if spec.role == "reference" or spec.kind == "full":
            continue
        free = [s for s in settings if s.label_free]
        if free:
            out[method] = free[0]
    return out


def stability_jobs(plan, config: dict[str, Any]) -> list[tuple[str, str, int]]:
    """``(data set instance, method, h)`` of every stability job of ``plan`` (none when the
    config's ``stability.enabled`` is false): on every data set, or on those of
    ``stability.datasets`` (by registry name, as ``oracle_datasets``)."""
    cfg = stability_config(config)
    if not cfg["enabled"]:
        return []
    chosen = stability_settings(plan)
    bases = cfg["datasets"]
    return [
        (d, m, stability_h(inst.hs, cfg["h"]))
        for d, inst in plan.instances.items()
        if bases is None or inst.base in bases
        for m, s in chosen.items()
        if s in plan.dataset_settings(m, d)
    ]


def run_stability(
    data: str | Path,
    method: str,
    params: dict[str, Any],
    h: int,
    out: str | Path,
    *,
    seed: int = 0,
    m: int = 10,
    fraction: float = 0.9,
    level: float = 0.95,
    budget_seconds: float | None = None,
    pid: str = "",
    lineage: str = "",
    budget_key: float | None = None,
) -> dict[str, Any]:
    """Fit ``method`` (``params``) at ``h`` on ``m`` subsamples of the data file ``data``
    and write the selections, their stability and the fits' facts to ``out`` (JSON), with
    the job's ``lineage`` (:meth:`ufs.pipeline.lineage.PlanLineage.stability_lineage`: a
    restored record whose lineage is the plan's is not run again), the budget it ran with
    and the re-run key it ran under (``budget_key``:
    :func:`ufs.pipeline.lineage.stability_budget_key`)."""
    d = load_data(data)
    k = int(d["y"].max()) + 1
    fixed = fixed_iteration_budget(method, params)
    n = d["X"].shape[0]
    facts: list[dict[str, Any]] = []
    stopped = ""

    selections = []
    for draw, rows in enumerate(subsample_rows(n, m=m, fraction=fraction, seed=seed)):
        est = make_estimator(
            method, params, n_features_to_select=h, n_clusters=k, random_state=seed
        )
        X = input_matrix(est.input_space, d["X_raw"][rows], d["X"][rows])
        c0 = time.process_time()
        exceeded = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.simplefilter("ignore", ConstantFeaturesWarning)
            try:
                with fit_budget(budget_seconds):
                    est.fit(X)
            except BUDGET_ERRORS as exc:
                exceeded = exc
        cpu = time.process_time() - c0
        if exceeded is not None:
            facts.append({"draw": draw, "cpu_seconds": cpu, "status": "budget_exceeded"})
            stopped = f"draw {draw}: {budget_reason(exceeded)}"
            break
        messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        status = fit_status(
            _scalar_attributes(est),
            getattr(est, "objective_", None),
            messages,
            fixed_budget=fixed,
            h=h,
        )
        facts.append({"draw": draw, "cpu_seconds": cpu, "status": status, "warnings": messages})
        selections.append(np.asarray(est.selected_features_, dtype=np.int64))
        print(
            f"stability {method} h={h} draw {draw + 1}/{m}: {cpu:.3f} CPU-s, {status}",
            file=sys.stderr,
            flush=True,
        )
    p = d["X"].shape[1]
    record: dict[str, Any] = {
        "method": method,
        "setting": pid,
        "params": params,
        "h": int(h),
        "m": int(m),
        "fraction": float(fraction),
        "seed": int(seed),
        "n_samples": int(n),
        "n_features": int(p),
        "cpu_seconds": float(sum(f["cpu_seconds"] for f in facts)),
        "fits": facts,
        "status": worst(f["status"] for f in facts),
        "flagged": int(sum(f["status"] not in ("ok", "fixed_budget") for f in facts)),
    }
    if lineage:
        record["lineage"] = lineage
    if budget_seconds:  # as given (600 stays 600: the key is a rule parameter)
        record["budget_seconds"] = budget_seconds
        record["budget_key"] = budget_key if budget_key is not None else budget_seconds
    if stopped:
        record.update(stability=None, reason=f"not computed: {stopped}")
    else:
        record["selections"] = [s.tolist() for s in selections]
        try:
            record.update(stability(selection_matrix(selections, p), level=level).as_dict())
        except ValueError as exc:  # every selection empty or full: undefined
            record.update(stability=None, reason=f"not computed: {exc}")
    write_json(out, record)
    return record
