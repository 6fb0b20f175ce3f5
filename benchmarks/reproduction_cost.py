"""What each seed paper's reproduction would cost here, before running it.

The per-method CPU-time models of :mod:`ufs.pipeline.cost_estimate` are fitted on the
benchmark archive's own label-free fits; each paper config's plan (its offline data sets,
h grid and label-tuned grids, as ``build_plan`` makes them) is then priced fit by fit
under the config's budget rule: a subset method fits each setting at every h, a ranking
method once per setting. Printed per paper and method: CPU-h of the full grids, and of the
grids thinned to at most 9 settings (``grid_max_settings: 9``, the benchmark's rule).

    python benchmarks/reproduction_cost.py [--archives benchmarks/results/benchmark.tar.xz ...]
        [--write-model]   # also store the model every workflow run prices itself with

The model is fitted on label-free fits (one setting per method and data set), but a grid's
settings can cost more than the default: RUFS's 343 settings on Fashion-MNIST took 1.35
CPU-h where the default's cost predicted 0.39. So each method's *grid factor* — the median
over data sets of (mean CPU of its grid settings' fits) / (CPU of its label-free fit), from
the archives' label-tuned runs — multiplies the prediction of its grid settings (1 for a
method no archive tunes); both totals are printed.

An extrapolation in n, p and the grid: a rough figure (the benchmark report gives the
model's leave-one-data-set-out error). Nothing is fitted.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from ufs.pipeline.cost_estimate import fit_cost_model, fit_costs
from ufs.pipeline.run_cost import MODEL_FILE, plan_cost, save_cost_model
from ufs.report.archive_tables import report_inputs_from_archive
from ufs.report.benchmark_report import load_run

REPO = Path(__file__).resolve().parents[1]
PAPERS = ("kmeans_ufs", "dgufs", "fsbc", "golfs", "spcafs")


def models_from_archives(archives: list[Path]):
    """(the cost model, the grid factors) from the archives given, each restored once: the
    model is fitted on their label-free fits (:func:`ufs.pipeline.cost_estimate.fit_costs`),
    the factors from their label-tuned ones (:func:`_grid_ratios`)."""
    import numpy as np
    import pandas as pd

    costs, ratios = [], {}
    for archive in archives:
        with tempfile.TemporaryDirectory() as tmp:
            report_inputs_from_archive(archive, tmp)
            run = load_run(tmp, Path(tmp) / "config.yaml")
            shapes = {d: run.shapes[d] for d in run.datasets}
            files = sorted((Path(tmp) / "evaluations").glob("*/*.json"))
            costs.append(fit_costs(files, shapes))
            for method, r in _grid_ratios(files).items():
                ratios.setdefault(method, []).extend(r)
    factors = {m: float(np.median(r)) for m, r in ratios.items()}
    return fit_cost_model(pd.concat(costs, ignore_index=True)), factors


def _grid_ratios(files: list[Path]) -> dict[str, list[float]]:
    """method → per data set, its grid settings' mean fit CPU over its label-free fit's
    CPU (module docstring), where it has both."""
    import numpy as np

    from ufs.pipeline.io import read_evaluations

    free: dict[tuple, float] = {}
    grid: dict[tuple, list[float]] = {}
    for ev in read_evaluations(files):
        cpu = ev.get("fit_cpu_seconds_total")
        if cpu is None or ev.get("draw") is not None:
            continue
        key = (ev["dataset"], ev["method"])
        if ev.get("label_free"):
            free[key] = float(cpu)
        if ev.get("in_grid"):
            grid.setdefault(key, []).append(float(cpu))
    ratios: dict[str, list[float]] = {}
    for key, cpus in grid.items():
        if len(cpus) > 1 and free.get(key, 0.0) > 0.05:  # below 50 ms: noise
            ratios.setdefault(key[1], []).append(float(np.mean(cpus)) / free[key])
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--archives",
        nargs="+",
        default=[str(REPO / "benchmarks/results/benchmark.tar.xz")],
        help="archives whose fits the cost model is fitted on (default: the benchmark's)",
    )
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "datasets"))
    ap.add_argument(
        "--write-model",
        action="store_true",
        help=f"write the fitted model to {MODEL_FILE.relative_to(REPO)}, the one every "
        "workflow run prices itself with",
    )
    args = ap.parse_args()
    model, factors = models_from_archives([Path(a) for a in args.archives])
    if args.write_model:
        names = ", ".join(Path(a).name for a in args.archives)
        save_cost_model(model, factors, MODEL_FILE, f"label-free fits of {names}")
        print(f"wrote {MODEL_FILE}")
    print(
        "grid factors (median grid-setting CPU / default's CPU): "
        + ", ".join(f"{m} {f:.2f}" for m, f in sorted(factors.items()))
    )
    total = {"full": 0.0, "thinned": 0.0, "full_g": 0.0, "thinned_g": 0.0}
    for paper in PAPERS:
        config = yaml.safe_load((REPO / "config/experiments" / f"{paper}.yaml").read_text())
        config.update(mirror_dir=args.mirror, offline_only=True, protocols=["oracle"])
        thinned = {**config, "grid_max_settings": 9}
        full, thin = plan_cost(model, config), plan_cost(model, thinned)
        full_g, thin_g = plan_cost(model, config, factors), plan_cost(model, thinned, factors)
        hours = {
            k: sum(r["cpu_s"] for r in v.values()) / 3600
            for k, v in (
                ("full", full),
                ("thinned", thin),
                ("full_g", full_g),
                ("thinned_g", thin_g),
            )
        }
        for k, v in hours.items():
            total[k] += v
        print(
            f"\n{paper}: full grids {hours['full']:.2f} CPU-h ({hours['full_g']:.2f} with the "
            f"grid factors), thinned to 9 settings {hours['thinned']:.2f} "
            f"({hours['thinned_g']:.2f})"
        )
        for m in sorted(full_g, key=lambda m: -full_g[m]["cpu_s"]):
            miss = " (no cost model: not priced)" if full[m]["unmodelled"] else ""
            print(
                f"  {m:<18} {full[m]['fits']:>6} fits {full[m]['cpu_s'] / 3600:7.2f} "
                f"({full_g[m]['cpu_s'] / 3600:.2f}) CPU-h   thinned {thin[m]['fits']:>5} fits "
                f"{thin[m]['cpu_s'] / 3600:6.2f} ({thin_g[m]['cpu_s'] / 3600:.2f}) CPU-h{miss}"
            )
    print(
        f"\nall five: full {total['full']:.1f} CPU-h ({total['full_g']:.1f} with the grid "
        f"factors), thinned {total['thinned']:.1f} ({total['thinned_g']:.1f})"
    )


if __name__ == "__main__":
    main()
