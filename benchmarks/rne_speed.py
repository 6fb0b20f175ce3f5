"""CPU time of RNE's fit on one BLAS thread, on representative shapes (not a test).

    python benchmarks/rne_speed.py [--repeats 3] [--max-iter 50] [--cases digits image ...]

Cases (``h`` = number selected = columns of ``H``, the authors' ``m = h``):

* ``digits``: scikit-learn's digits, 1797 x 64 (61 non-constant), z-scored, h = 20;
* ``image``: n = 1400, p = 1024 (COIL20/PIE-like; p <= n), h = 50;
* ``ar``: n = 1680, p = 2000 (AR-like; n < p <= 2n), h = 50;
* ``gene``: n = 100, p = 5000 (gene-expression-like; p >> n, where the archived benchmark
  spent most of RNE's time), h = 50;
* ``gene300``: the same shape with h = 300 (the largest h of the benchmark's grid).

The synthetic inputs are Gaussian with 5 planted clusters in 10 % of the features, seeded
and z-scored; the fit is ``RNE(h, random_state=0, max_iter=...)`` with the defaults (50
outer x 30 inner iterations). Each fit runs ``--repeats`` times; the table gives the median
and the minimum of ``time.process_time`` (the whole process, so BLAS threads would count;
``OMP/OPENBLAS/MKL_NUM_THREADS=1`` are set before NumPy is imported, as the workflow runs
fits), the wall time of the median run, and the last objective and a digest of the
selection, so that runs of two versions of the code can be checked to compute the same.

The repository the script sits in is put first on ``sys.path``: a copy of this file in a
``git worktree`` of an earlier commit times that commit's code.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from ufs import standardize  # noqa: E402
from ufs.methods import RNE  # noqa: E402

CASES = {
    "digits": (None, None, 20),
    "image": (1400, 1024, 50),
    "ar": (1680, 2000, 50),
    "gene": (100, 5000, 50),
    "gene300": (100, 5000, 300),
}


def data(case: str) -> np.ndarray:
    n, p, _ = CASES[case]
    if n is None:
        from sklearn.datasets import load_digits

        return standardize(load_digits().data).X
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, n)
    X = rng.normal(size=(n, p))
    s = max(1, p // 10)
    X[:, :s] += 2.0 * rng.normal(size=(5, s))[y]
    return standardize(X).X


def run(case: str, repeats: int, max_iter: int) -> dict:
    X = data(case)
    h = CASES[case][2]
    cpu, wall, est = [], [], None
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # digits: constant features
            est = RNE(h, random_state=0, max_iter=max_iter).fit(X)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    med = statistics.median(cpu)
    digest = hashlib.sha1(np.asarray(est.selected_features_, dtype=np.int64).tobytes())
    return {
        "case": case,
        "shape": f"{X.shape[0]} x {X.shape[1]}",
        "h": h,
        "cpu": med,
        "cpu_min": min(cpu),
        "wall": wall[cpu.index(med)] if med in cpu else statistics.median(wall),
        "objective": float(est.objective_[-1]),
        "selection": digest.hexdigest()[:10],
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = ap.parse_args(argv)
    print(f"RNE fit, {args.max_iter} outer x 30 inner iterations, one BLAS thread, {REPO}")
    print()
    print("| case | n x p | h | CPU s (median) | CPU s (min) | wall s | objective | selection |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for case in args.cases:
        r = run(case, args.repeats, args.max_iter)
        print(
            f"| {r['case']} | {r['shape']} | {r['h']} | {r['cpu']:.2f} | {r['cpu_min']:.2f} "
            f"| {r['wall']:.2f} | {r['objective']:.10g} | `{r['selection']}` |",
            flush=True,
        )


if __name__ == "__main__":
    main()
