"""Exact vs approximate kNN search at Fashion-MNIST scale ("Scale"; not a test).

    python benchmarks/knn_scale.py [--n 70000] [--p 784 100] [--k 10] [--queries 2000]
                                   [--exact-sample M] [--repeat]

Data: a Fashion-MNIST-shaped stand-in — 10 Gaussian clusters (centres N(0, 3²)) in a
20-dimensional latent space, mapped to ``p`` features by a random Gaussian matrix, plus
N(0, 0.5²) noise on every feature, then z-scored (the workflow's default input space).

For each ``p``: wall and CPU seconds of :func:`ufs.graph.knn_indices` with
``algorithm="exact"`` (scikit-learn brute force, float64) and ``"approximate"`` (faiss
NN-descent, ``ufs.graph.NND_*``), their ratio, and recall@5 / recall@k of the approximate
neighbours against exact search on ``--queries`` random query points (the sample itself
excluded, as in ``knn_indices``). ``--exact-sample M`` times exact search of ``M`` query
points against all ``n`` and scales by ``n / M`` (brute force is linear in the queries),
saving minutes per row; the row is then marked ``(extrapolated)``. ``--repeat`` runs the
approximate search twice and reports whether the results are identical. Set
``OMP_NUM_THREADS=1`` (and the BLAS equivalents) to measure one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ufs.graph import knn_indices


def fmnist_like(n: int, p: int, seed: int = 0, n_clusters: int = 10, rank: int = 20):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(n_clusters, rank))
    z = centers[rng.integers(n_clusters, size=n)] + rng.normal(size=(n, rank))
    X = z @ (rng.normal(size=(rank, p)) / np.sqrt(rank)) + 0.5 * rng.normal(size=(n, p))
    return (X - X.mean(0)) / X.std(0)


def exact_rows(X: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """Exact neighbours of the rows ``q`` (themselves excluded), nearest first."""
    idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X[q], return_distance=False)
    return np.array([[j for j in row if j != i][:k] for i, row in zip(q, idx, strict=True)])


def recall(found: np.ndarray, truth: np.ndarray, k: int) -> float:
    return float(
        np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, truth, strict=True)])
    )


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=70_000)
    ap.add_argument("--p", type=int, nargs="+", default=[784, 100])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--exact-sample", type=int, default=0)
    ap.add_argument("--repeat", action="store_true")
    a = ap.parse_args(argv)
    _, t_import, _ = timed(lambda: __import__("faiss"))
    print(f"import faiss: {t_import:.2f} s wall")
    head = f"{'n':>7} {'p':>5} {'exact s (wall/cpu)':>22} {'approx s (wall/cpu)':>21}"
    print(f"{head} {'ratio':>6} {'recall@5':>9} {f'recall@{a.k}':>10} {'repeat':>8}")
    for p in a.p:
        X = fmnist_like(a.n, p)
        q = np.random.default_rng(1).choice(a.n, min(a.queries, a.n), replace=False)
        (ia, _), aw, ac = timed(lambda X=X: knn_indices(X, a.k, algorithm="approximate"))
        same = "-"
        if a.repeat:
            same = (
                "same"
                if np.array_equal(knn_indices(X, a.k, algorithm="approximate")[0], ia)
                else "DIFF"
            )
        if a.exact_sample:
            m = np.random.default_rng(2).choice(a.n, a.exact_sample, replace=False)
            _, ew, ec = timed(lambda X=X, m=m: exact_rows(X, m, a.k))
            ew, ec, note = ew * a.n / len(m), ec * a.n / len(m), " (extrapolated)"
            truth = exact_rows(X, q, a.k)
        else:
            (ie, _), ew, ec = timed(lambda X=X: knn_indices(X, a.k, algorithm="exact"))
            truth, note = ie[q], ""
        print(
            f"{a.n:>7} {p:>5} {f'{ew:.1f} / {ec:.1f}':>22} {f'{aw:.1f} / {ac:.1f}':>21} "
            f"{ec / ac:>6.1f} {recall(ia[q], truth, 5):>9.4f} {recall(ia[q], truth, a.k):>10.4f} "
            f"{same:>8}{note}",
            flush=True,
        )


if __name__ == "__main__":
    main()
