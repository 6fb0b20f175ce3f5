"""What each seed paper's reproduction would cost here, before running it (issue 38).

The per-method CPU-time models of :mod:`ufs.pipeline.cost_estimate` are fitted on the
benchmark archive's own label-free fits; each paper config's plan (its offline data sets,
h grid and label-tuned grids, as ``build_plan`` makes them) is then priced fit by fit
under the config's budget rule: a subset method fits each setting at every h, a ranking
method once per setting. Printed per paper and method: CPU-h of the full grids, and of the
grids thinned to at most 9 settings (``grid_max_settings: 9``, the benchmark's rule).

    python benchmarks/reproduction_cost.py [--archive benchmarks/results/benchmark.tar.xz]

An extrapolation in n, p and the grid: a rough figure (the benchmark report gives the
model's leave-one-data-set-out error). Nothing is fitted.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from ufs.pipeline.config import build_plan
from ufs.pipeline.cost_estimate import fit_cost_model, fit_costs
from ufs.report.archive_tables import report_inputs_from_archive
from ufs.report.benchmark_report import load_run

REPO = Path(__file__).resolve().parents[1]
PAPERS = ("kmeans_ufs", "dgufs", "fsbc", "golfs", "spcafs")


def model_from_archive(archive: Path):
    with tempfile.TemporaryDirectory() as tmp:
        report_inputs_from_archive(archive, tmp)
        run = load_run(tmp, Path(tmp) / "config.yaml")
        shapes = {d: run.shapes[d] for d in run.datasets}
        files = sorted((Path(tmp) / "evaluations").glob("*/*.json"))
        return fit_cost_model(fit_costs(files, shapes))


def plan_cost(model, config: dict) -> dict[str, dict[str, float]]:
    """method → {"cpu_s": predicted CPU seconds, "fits": number of fits, "unmodelled": 0/1}
    for the plan of ``config`` (label-tuned settings of the oracle protocol)."""
    plan = build_plan(config, warn=False)
    budget = float((config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    out: dict[str, dict[str, float]] = {}
    for dataset, inst in plan.instances.items():
        n, p, c = inst.n_samples, inst.n_features, inst.n_classes
        for method in plan.settings:
            settings = plan.dataset_settings(method, dataset)
            row = out.setdefault(method, {"cpu_s": 0.0, "fits": 0, "unmodelled": 0})
            if method not in model.coef:
                row["unmodelled"] = 1
                continue
            for _setting in settings:
                for h in plan.fit_hs(method, dataset, plan.hkeys(method, dataset)[0]) or [None]:
                    t = model.predict(method, n, p, c, h)
                    row["fits"] += 1
                    row["cpu_s"] += min(t, budget)
                    if t > budget:  # the setting's larger h are skipped (the workflow's rule)
                        break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", default=str(REPO / "benchmarks/results/benchmark.tar.xz"))
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "datasets"))
    args = ap.parse_args()
    model = model_from_archive(Path(args.archive))
    total = {"full": 0.0, "thinned": 0.0}
    for paper in PAPERS:
        config = yaml.safe_load((REPO / "config/experiments" / f"{paper}.yaml").read_text())
        config.update(mirror_dir=args.mirror, offline_only=True, protocols=["oracle"])
        full = plan_cost(model, config)
        thin = plan_cost(model, {**config, "grid_max_settings": 9})
        f_h = sum(r["cpu_s"] for r in full.values()) / 3600
        t_h = sum(r["cpu_s"] for r in thin.values()) / 3600
        total["full"] += f_h
        total["thinned"] += t_h
        print(f"\n{paper}: full grids {f_h:.2f} CPU-h, thinned to 9 settings {t_h:.2f} CPU-h")
        for m in sorted(full, key=lambda m: -full[m]["cpu_s"]):
            miss = " (no cost model: not priced)" if full[m]["unmodelled"] else ""
            print(
                f"  {m:<18} {full[m]['fits']:>6} fits {full[m]['cpu_s'] / 3600:7.2f} CPU-h"
                f"   thinned {thin[m]['fits']:>5} fits {thin[m]['cpu_s'] / 3600:6.2f} CPU-h{miss}"
            )
    print(f"\nall five: full {total['full']:.1f} CPU-h, thinned {total['thinned']:.1f} CPU-h")


if __name__ == "__main__":
    main()
