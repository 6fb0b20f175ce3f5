"""MCFS on a disconnected kNN graph: the spectral embedding's unit eigenvalues and
the top-h agreement with an embedding from dense ``eigh``.

For each input (COIL20 in full, 1440 × 1024, and a 360-sample subset; standardized, the
5-NN heat graph MCFS builds) it prints the number of connected components, how many
eigenvalues equal to 1 (to 1e-10) three embeddings hold — plain ARPACK on
``M = D^{-1/2} S D^{-1/2}`` (what ``spectral_embedding`` did before it was fixed), the
project's :func:`ufs.methods.mcfs.spectral_embedding` (per-component solver) and dense
``eigh`` of ``M`` — and the overlap of MCFS's top-h features with the dense-``eigh``
embedding's, for h = 10, 20, 50; also the overlap of the project's sparse (Lanczos) and
dense paths, which must be h. Inside the repeated unit eigenvalue the basis is arbitrary
(also in the authors' code), so the overlap with another solver's basis need not be h: the
last column shows how far equally valid bases (dense ``eigh``'s own unit-block vectors,
orthonormalised against ``D^{1/2} 1`` in other orders) move MCFS's selection.

Run: ``python benchmarks/mcfs_disconnected.py [--mirror ../shared/datasets]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ufs.methods.mcfs as mcfs_mod
from ufs.datasets import load_dataset
from ufs.eigen import graph_components
from ufs.graph import degree, knn_graph
from ufs.preprocessing import standardize

HS = (10, 20, 50)
N_ORDERS = 5


def _normalized(S) -> tuple[sp.csr_matrix, np.ndarray]:
    d = degree(S)
    Dm = sp.diags(1.0 / np.sqrt(d))
    return (Dm @ S @ Dm).tocsr(), d


def _embedding_from(w: np.ndarray, U: np.ndarray, d: np.ndarray):
    """``spectral_embedding``'s post-processing (drop ``D^{1/2} 1`` from the unit block)
    applied to given top ``c + 1`` pairs (decreasing)."""
    u0 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    b = int(np.sum(w > w[0] - 1e-9))
    U = U.copy()
    if b > 1:
        Q, _ = np.linalg.qr(np.column_stack([u0, U[:, :b]]))
        U[:, 1:b] = Q[:, 1:b]
    return 1.0 - w[1:], U[:, 1:] / np.sqrt(d)[:, None]


def _plain_arpack(S, c: int):
    M, d = _normalized(S)
    v0 = np.random.default_rng(0).standard_normal(M.shape[0])
    w, U = spla.eigsh(M, k=c + 1, which="LA", v0=v0)
    order = np.argsort(-w)
    return _embedding_from(w[order], U[:, order], d)


def _dense(S, c: int):
    M, d = _normalized(S)
    w, U = sla.eigh(M.toarray())
    return _embedding_from(w[::-1][: c + 1], U[:, ::-1][:, : c + 1], d)


def _mcfs_order(X: np.ndarray, c: int, h: int, embed=None) -> np.ndarray:
    real = mcfs_mod.spectral_embedding
    if embed is not None:
        mcfs_mod.spectral_embedding = lambda S, c, seed=0: embed(S, c)
    try:
        return mcfs_mod.MCFS(h, n_clusters=c).fit(X).selected_features_
    finally:
        mcfs_mod.spectral_embedding = real


def report(name: str, X: np.ndarray, c: int) -> None:
    S = knn_graph(X, 5, weight="heat")
    n_comp = graph_components(S)[0]
    print(f"\n## {name}: n = {X.shape[0]}, p = {X.shape[1]}, c = {c}, components = {n_comp}")
    for label, emb in (
        ("plain ARPACK (before)", _plain_arpack),
        ("spectral_embedding (now)", lambda S, c: mcfs_mod.spectral_embedding(S, c)),
        ("dense eigh", _dense),
    ):
        lam, _ = emb(S, c)
        print(f"{label:26s} unit eigenvalues (incl. trivial): {1 + int(np.sum(lam < 1e-10))}")
    # equally valid bases: dense eigh's own unit-block vectors in other orders
    M, d = _normalized(S)
    w, U = sla.eigh(M.toarray())
    w, U = w[::-1][: c + 1], U[:, ::-1][:, : c + 1]
    rng = np.random.default_rng(0)
    orders = [
        np.concatenate([rng.permutation(n_comp), np.arange(n_comp, c + 1)]) for _ in range(N_ORDERS)
    ]
    print(
        "| h | now (sparse path) ∩ now (dense path) | now ∩ dense eigh | before ∩ dense eigh "
        f"| dense eigh, {N_ORDERS} other orders of its unit block ∩ dense eigh (min-max) |"
    )
    print("|---:|---:|---:|---:|---:|")
    means = np.zeros(3)
    for h in HS:
        ref = set(_mcfs_order(X, c, h, _dense))
        now = set(_mcfs_order(X, c, h))
        real = mcfs_mod.DENSE_LIMIT
        mcfs_mod.DENSE_LIMIT = X.shape[0]
        try:
            now_dense = set(_mcfs_order(X, c, h))
        finally:
            mcfs_mod.DENSE_LIMIT = real
        before = set(_mcfs_order(X, c, h, _plain_arpack))
        other = [
            len(
                set(_mcfs_order(X, c, h, lambda S, c, o=o: _embedding_from(w[o], U[:, o], d))) & ref
            )
            for o in orders
        ]
        means += np.array([len(now & now_dense), len(now & ref), len(before & ref)]) / h
        print(
            f"| {h} | {len(now & now_dense)} | {len(now & ref)} | {len(before & ref)} "
            f"| {min(other)}-{max(other)} |"
        )
    means /= len(HS)
    print(
        f"mean overlap / h: sparse ∩ dense path {means[0]:.3f}, now ∩ dense eigh {means[1]:.3f}, "
        f"before ∩ dense eigh {means[2]:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mirror", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
    )
    args = ap.parse_args()
    d = load_dataset("coil20", mirror=args.mirror)
    X = d.X.astype(np.float64)
    c = int(d.y.max()) + 1
    report("COIL20", standardize(X).X, c)
    sub = np.concatenate([np.flatnonzero(d.y == k)[:18] for k in range(c)])
    report("COIL20, first 18 images of each object", standardize(X[sub]).X, c)


if __name__ == "__main__":
    main()
