"""What a run will cost, said before it starts: one line printed by every workflow run
(and dry run) — the fit jobs still to do and those whose evaluation is on disk (kept, not
re-run), the CPU hours the cost model predicts for what is left, and the data sets to
download with their size.

The cost model is :mod:`ufs.pipeline.cost_estimate`'s, fitted on the label-free fits of
the benchmark archive (``benchmarks/results/benchmark.tar.xz``) and stored as
:data:`MODEL_FILE` (``python benchmarks/reproduction_cost.py --write-model``), with each
method's *grid factor* (how much more its label-tuned settings cost than its default).
A task is priced fit by fit under the config's budget rule: a subset method at each of its
h values until one is predicted over the budget (the larger h are then skipped, the
workflow's rule), a ranking or full method once; every task's k-means evaluation by the
k-means model. A method without a model (a plugin, a data set of unknown shape) is named,
not priced. The figure is an extrapolation, a rough one: the model's leave-one-data-set-out
error is in the benchmark report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..fileio import write_text
from .cost_estimate import CostModel

if TYPE_CHECKING:
    from .lineage import PlanLineage

__all__ = [
    "MODEL_FILE",
    "RunCost",
    "load_cost_model",
    "save_cost_model",
    "save_timed_model",
    "plan_cost",
    "run_cost",
    "cost_line",
    "replaced_report",
]

#: the cost model the workflow prices runs with
MODEL_FILE = Path(__file__).with_name("cost_model.json")


def _model_doc(model: CostModel) -> dict[str, Any]:
    return {
        "form": dict(sorted(model.form.items())),
        "coef": {m: [float(x) for x in c] for m, c in sorted(model.coef.items())},
        "loo_log_error": {m: float(e) for m, e in sorted(model.loo_log_error.items())},
    }


def _read_doc(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}


def save_cost_model(
    model: CostModel, factors: dict[str, float], path: str | Path, source: str
) -> None:
    """Write ``model`` and the grid ``factors`` as JSON (``source``: what it was fitted on).
    The file's timed section (:func:`save_timed_model`) is kept."""
    timed = _read_doc(path).get("timed")
    doc = {"source": source, **_model_doc(model), "grid_factors": dict(sorted(factors.items()))}
    if timed:
        doc["timed"] = timed
    write_text(path, json.dumps(doc, indent=1) + "\n")


def save_timed_model(model: CostModel, path: str | Path, source: str) -> None:
    """Store ``model`` as the file's *timed* section: models of methods the benchmark archive
    has no fits of, fitted on timed fits of their own (``source`` says which). The archive's
    model of a method, once it has one, takes precedence (:func:`load_cost_model`)."""
    doc = _read_doc(path)
    timed = doc.get("timed") or {"source": source, "form": {}, "coef": {}, "loo_log_error": {}}
    new = _model_doc(model)
    timed["source"] = source
    for key in ("form", "coef", "loo_log_error"):
        timed[key] = dict(sorted({**timed.get(key, {}), **new[key]}.items()))
    doc["timed"] = timed
    write_text(path, json.dumps(doc, indent=1) + "\n")


def load_cost_model(path: str | Path = MODEL_FILE) -> tuple[CostModel, dict[str, float], str]:
    """``(model, grid factors, source)`` from :func:`save_cost_model`'s file: the archive's
    models, and the timed section's for the methods the archive has none of."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    timed = doc.get("timed") or {}
    # per section, the archive's entry of a method wins over its timed one
    merged = {
        k: {**timed.get(k, {}), **(doc.get(k) or {})} for k in ("form", "coef", "loo_log_error")
    }
    model = CostModel(
        coef={m: np.asarray(c, dtype=float) for m, c in merged["coef"].items()},
        form=merged["form"],
        loo_log_error=merged["loo_log_error"],
    )
    keep = [m for m in timed.get("coef", {}) if m not in doc["coef"]]
    source = str(doc.get("source", ""))
    if keep:
        source += f"; {', '.join(keep)}: {timed.get('source', 'timed fits')}"
    return model, dict(doc.get("grid_factors") or {}), source


def _grid_factor(factors: dict[str, float] | None, method: str, n_settings: int) -> float:
    """How much more a setting of ``method``'s grid costs than its default: its grid
    factor when it has several settings on the data set, else 1."""
    return (factors or {}).get(method, 1.0) if n_settings > 1 else 1.0


def _fit_cpu(model: CostModel, method: str, n, p, c, hs, factor: float, budget: float) -> float:
    """Predicted CPU seconds of one setting's fits at ``hs`` (``[None]``: one fit)."""
    total = 0.0
    for h in hs:
        t = factor * model.predict(method, n, p, c, h)
        total += min(t, budget)
        if t > budget:  # the setting's larger h are skipped (the workflow's rule)
            break
    return total


def plan_cost(
    model: CostModel, config: dict, factors: dict[str, float] | None = None, plan=None
) -> dict[str, dict[str, float]]:
    """method → ``{"cpu_s", "fits", "unmodelled"}``: the predicted fit CPU seconds of the
    plan of ``config`` (every protocol's settings), its number of fits, and 1 when the
    method has no model; ``factors`` multiply a method's settings when it has several."""
    from .config import build_plan

    plan = plan or build_plan(config, warn=False)
    budget = float((config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    out: dict[str, dict[str, float]] = {}
    for dataset, inst in plan.instances.items():
        n, p, c = inst.n_samples, inst.n_features, inst.n_classes
        for method in plan.settings:
            settings = plan.dataset_settings(method, dataset)
            row = out.setdefault(method, {"cpu_s": 0.0, "fits": 0, "unmodelled": 0})
            if method not in model.coef or n is None or c is None:
                row["unmodelled"] = 1
                continue
            factor = _grid_factor(factors, method, len(settings))
            hs = plan.fit_hs(method, dataset, plan.hkeys(method, dataset)[0]) or [None]
            for _setting in settings:
                row["fits"] += len(hs)
                row["cpu_s"] += _fit_cpu(model, method, n, p, c, hs, factor, budget)
    return out


@dataclass
class RunCost:
    """What is left of a run (:func:`run_cost`)."""

    jobs: int = 0  # fit jobs (chunks) to run: no evaluation on disk, or a stale restored one
    kept: int = 0  # fit jobs whose evaluation is on disk and current: not re-run
    stale: int = 0  # of ``jobs``: restored evaluations whose lineage is not the plan's
    fit_cpu_s: float = 0.0
    kmeans_cpu_s: float = 0.0
    unmodelled: set[str] = field(default_factory=set)
    fetch: dict[str, int | None] = field(default_factory=dict)  # data set → bytes (None: unknown)
    stability_jobs: int = 0  # stability jobs (ufs.pipeline.stability_step) not on disk
    stability_fits: int = 0  # their fits (m each)
    stability_cpu_s: float = 0.0

    @property
    def cpu_hours(self) -> float:
        return (self.fit_cpu_s + self.kmeans_cpu_s + self.stability_cpu_s) / 3600


def run_cost(
    plan,
    config: dict[str, Any],
    output_dir: str | Path,
    *,
    model: CostModel | None = None,
    factors: dict[str, float] | None = None,
    fetch: Iterable[str] = (),
    lineage: PlanLineage | None = None,
) -> RunCost:
    """Price the fit jobs of ``plan`` whose evaluation (``<output_dir>/evaluations/<data
    set>/<chunk>.json``) is not on disk; ``fetch``: the data sets the run downloads.

    ``lineage`` (the workflow's :class:`ufs.pipeline.lineage.PlanLineage`): an evaluation
    restored without its fit files whose recorded lineage is not the plan's is re-fitted by
    the workflow, so it is priced and counted as :attr:`RunCost.stale`, not kept. Without
    it every evaluation on disk counts as kept."""
    from ..datasets.availability import download_size

    if model is None:
        model, factors, _ = load_cost_model()
    budget = float((config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    out = RunCost(fetch={d: download_size(d) for d in sorted(set(fetch))})
    root = Path(output_dir) / "evaluations"
    for dataset, inst in plan.instances.items():
        n, p, c = inst.n_samples, inst.n_features, inst.n_classes
        for chunk, tasks in plan.chunks(dataset).items():
            if (root / dataset / f"{chunk}.json").is_file():
                if lineage is None or not _stale(lineage.restored_lineages(dataset, chunk)):
                    out.kept += 1
                    continue
                out.stale += 1
            out.jobs += 1
            for task in tasks:
                if n is None or c is None:  # a data set of unknown shape
                    out.unmodelled.add(task.method)
                    continue
                hs = list(task.hs)
                if task.method not in model.coef:  # its fits unpriced, its k-means priced
                    out.unmodelled.add(task.method)
                else:
                    n_settings = len(plan.dataset_settings(task.method, dataset))
                    factor = _grid_factor(factors, task.method, n_settings)
                    out.fit_cpu_s += _fit_cpu(model, task.method, n, p, c, hs, factor, budget)
                if "<kmeans>" in model.coef:
                    total_h = float(sum(h for h in hs if h is not None) or sum(inst.hs))
                    out.kmeans_cpu_s += model.predict("<kmeans>", n, p, c, total_h)
    _stability_cost(out, plan, config, Path(output_dir), model, budget, lineage)
    return out


def _stale(lineages: tuple | None) -> bool:
    """Whether the workflow makes an output on disk again: restored, and its recorded
    lineage is not the plan's (:meth:`ufs.pipeline.lineage.PlanLineage.restored_lineages`)."""
    return lineages is not None and lineages[0] != lineages[1]


def _stability_cost(
    out: RunCost, plan, config, output_dir: Path, model, budget, lineage=None
) -> None:
    """Add the stability jobs not on disk, and the restored ones whose lineage is not the
    plan's (with ``lineage``, as :func:`run_cost`): ``m`` fits each on ``fraction · n``
    samples, at the job's h, priced by the fit cost model."""
    from .stability_step import stability_config, stability_jobs, stability_settings

    cfg = stability_config(config)
    settings = stability_settings(plan)
    for dataset, method, h in stability_jobs(plan, config):
        if (output_dir / "stability" / dataset / f"{method}.json").is_file() and (
            lineage is None
            or not _stale(lineage.restored_stability_lineages(dataset, settings[method], h, cfg))
        ):
            continue
        inst = plan.instances[dataset]
        out.stability_jobs += 1
        out.stability_fits += int(cfg["m"])
        if method not in model.coef or inst.n_samples is None or inst.n_classes is None:
            out.unmodelled.add(method)
            continue
        n = max(2, round(float(cfg["fraction"]) * inst.n_samples))
        one = model.predict(method, n, inst.n_features, inst.n_classes, h)
        out.stability_cpu_s += int(cfg["m"]) * min(one, budget)


def _size(nbytes: int) -> str:
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.0f} kB"


def cost_line(cost: RunCost) -> str:
    """The one line a run prints before it starts."""
    stale = (
        f" ({cost.stale} of them restored evaluations whose code, data or settings changed)"
        if cost.stale
        else ""
    )
    parts = [
        f"{cost.jobs} fit job(s) to run{stale}"
        + (f", {cost.kept} on disk kept" if cost.kept else "")
    ]
    if cost.stability_jobs:
        parts.append(
            f"{cost.stability_jobs} stability job(s) ({cost.stability_fits} fits on subsamples)"
        )
    if cost.jobs or cost.stability_jobs:
        hours = cost.cpu_hours
        secs = hours * 3600
        est = f"{hours:.2f} CPU-h" if hours >= 0.01 else f"{max(secs, 1):.0f} CPU-s"
        est = est if secs >= 1 else "under 1 CPU-s"
        parts.append(
            f"about {est} by the cost model (fits, k-means"
            + (", stability" if cost.stability_jobs else "")
            + ")"
        )
        if cost.unmodelled:
            parts.append(
                f"the fits of {', '.join(sorted(cost.unmodelled))} not priced (no cost model)"
            )
    if cost.fetch:
        known = [b for b in cost.fetch.values() if b is not None]
        unknown = sum(b is None for b in cost.fetch.values())
        size = " + ".join(
            ([_size(sum(known))] if known else [])
            + ([f"{unknown} of unknown size"] if unknown else [])
        )
        parts.append(f"{len(cost.fetch)} data set(s) to download ({size}): {', '.join(cost.fetch)}")
    else:
        parts.append("nothing to download")
    return "run cost: " + "; ".join(parts)


def replaced_report(output_dir: str | Path, datasets: Iterable[str]) -> str | None:
    """A warning when this run writes its summary over another run's: ``<output_dir>``
    holds a ``summary.md`` and the tables of data sets this run's config does not have
    (``datasets``: the registered or file names of the whole config's data sets, a
    slice's included; tables are named by them), so
    the new summary would drop them. None otherwise (a resumed or extended run)."""
    out = Path(output_dir)
    if not (out / "summary.md").is_file():
        return None
    others = sorted({p.stem for p in (out / "tables").glob("*.csv")} - set(datasets))
    if not others:
        return None
    return (
        f"this run writes its report over {out / 'summary.md'} (and its tables and figures), "
        f"which also covers {', '.join(others)}, not in this config: give this run its own "
        f"folder (--config output_dir={out}/<name>, and mlflow.experiment) to keep that report"
    )
