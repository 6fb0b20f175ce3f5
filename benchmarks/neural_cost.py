"""The cost model of the neural selectors, from timed fits: the benchmark archive has no fits
of them, so the workflow's cost line (``ufs.pipeline.run_cost``) could not price them.

A neural fit's CPU is its epochs times the CPU of one epoch, and an epoch's CPU depends on
the shape (``n`` samples: minibatches per epoch; ``p`` features and ``h`` nodes: the cost of
a step). So each method is timed for a few epochs (after a warm-up epoch) on synthetic
z-scored data of a grid of shapes, one thread, the time scaled to the registry's epochs,
and the cost model's own form, ``log t = a + α log n + β log p + γ log h``
(:mod:`ufs.pipeline.cost_estimate`), is fitted on those times, each shape counting as a
data set for the leave-one-out error. The CAE's retraining rule (twice the epochs when a run
ends unconcentrated, up to 5 runs) is not in the figure: it prices one run, a lower bound.

    OMP_NUM_THREADS=1 python benchmarks/neural_cost.py [--epochs 2] [--write-model]

``--write-model`` stores the models as the timed section of ``ufs/pipeline/cost_model.json``
(``save_timed_model``); an archive that has fits of these methods overrides them.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
import pandas as pd

from ufs.availability import import_requirements
from ufs.pipeline.cost_estimate import fit_cost_model
from ufs.pipeline.run_cost import MODEL_FILE, save_timed_model
from ufs.registry import get_method, make_estimator

METHODS = ("cae", "ipcae", "lscae")
SHAPES_N = (150, 1000, 6000)
SHAPES_P = (40, 600, 8000)
SHAPES_H = (5, 60)


def time_fit(method: str, n: int, p: int, h: int, epochs: int) -> float:
    """CPU seconds of one fit at the registry's budget, from ``epochs`` timed epochs."""
    X = np.random.default_rng(0).normal(size=(n, p))
    params = dict(get_method(method).defaults)
    budget = int(params["epochs"])
    cpu = {}
    for e in (1, 1 + epochs):  # the first fit's epoch is the warm-up, subtracted
        params.update(epochs=e, **({"tryout_limit": 1} if "tryout_limit" in params else {}))
        est = make_estimator(method, params, n_features_to_select=h, random_state=0)
        import_requirements(type(est))
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X)
        cpu[e] = time.process_time() - c0
    per_epoch = max(cpu[1 + epochs] - cpu[1], 1e-6) / epochs
    return per_epoch * budget + cpu[1] - per_epoch  # set-up once, then every epoch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--write-model", action="store_true")
    args = ap.parse_args()
    rows = []
    for method, n, p, h in itertools.product(METHODS, SHAPES_N, SHAPES_P, SHAPES_H):
        if h >= p:
            continue
        t = time_fit(method, n, p, h, args.epochs)
        rows.append(
            {
                "dataset": f"n{n}_p{p}",
                "method": method,
                "kind": "subset",
                "n": n,
                "p": p,
                "c": 2,
                "h": h,
                "cpu": t,
                "exceeded": False,
            }
        )
        print(f"{method:6s} n={n:5d} p={p:5d} h={h:3d}: {t:9.1f} CPU-s per fit", flush=True)
    model = fit_cost_model(pd.DataFrame(rows))
    print("\n| method | a | α (n) | β (p) | γ (h) | leave-one-shape-out median error |")
    print("|---|---|---|---|---|---|")
    for m in METHODS:
        a, *rest = model.coef[m]
        print(
            f"| {m} | {a:.2f} | "
            + " | ".join(f"{x:.2f}" for x in rest)
            + f" | ×{np.exp(model.loo_log_error[m]):.2f} |"
        )
    if args.write_model:
        save_timed_model(
            model,
            MODEL_FILE,
            f"timed fits on synthetic data (benchmarks/neural_cost.py, {args.epochs} epochs "
            "scaled to the registry's)",
        )
        print(f"\nwritten to {MODEL_FILE}")


if __name__ == "__main__":
    main()
