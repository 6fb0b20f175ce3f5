"""Extreme eigenpairs exact on repeated eigenvalues (``ufs.eigen``).

MCFS's spectral embedding ran ARPACK on ``M = D^{-1/2} S D^{-1/2}`` of a 9-component kNN
graph and returned 4 of the 9 unit eigenvalues, then 0.938 and 0.935 instead of the
missing copies, with fine residuals. These tests compare every solver path with an
independent dense reference on block-diagonal graphs whose node order is permuted (the
components are not contiguous), including identical copies of one block (every eigenvalue
repeated ``n_comp`` times), and check the subspaces of repeated eigenvalues, not only the
values.
"""

from __future__ import annotations

import functools
import warnings
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ufs.eigen
from ufs.eigen import (
    EigenSolverError,
    component_eigenpairs,
    extreme_eigenvectors,
    graph_components,
    missed_pairs,
)
from ufs.graph import degree, knn_graph, laplacian
from ufs.methods._optimal_graph import laplacian_eigenpairs

#: up to this order the reference is the dense ``eigh`` of the whole matrix
DENSE_REFERENCE_MAX = 2000

slow = pytest.mark.slow
#: (n_comp, n): every block has at least 6 nodes (here at least 27)
SIZES = [
    (1, 50),
    (2, 400),
    (9, 360),
    (9, 4050),
    (50, 2000),
    pytest.param(50, 20000, marks=slow),
]
FLAVOURS = ["distinct", "copies"]


# --------------------------------------------------------------------------- builders


class BlockGraph(NamedTuple):
    """A permuted block-diagonal affinity ``S``; ``blocks[b]`` occupies the nodes
    ``inv[offsets[b] : offsets[b] + size]`` of ``S`` (``inv`` inverts the permutation)."""

    S: sp.csr_matrix
    blocks: list
    offsets: np.ndarray
    inv: np.ndarray
    n_comp: int


def _connected_blob_graph(size, weight, rng):
    """kNN graph (k = 5) of a 3-d Gaussian blob, redrawn until it is connected."""
    for _ in range(50):
        S = knn_graph(rng.normal(size=(size, 3)), 5, weight=weight)
        if graph_components(S)[0] == 1:
            return S
    raise AssertionError("no connected blob graph drawn")


def _weight(n_comp, flavour):
    """Heat or binary weights, alternating over the cases so that both are covered."""
    return ("heat", "binary")[(n_comp + (flavour == "copies")) % 2]


@functools.cache
def block_graph(n_comp, n, flavour, weight=None, seed=0):
    """``n_comp`` connected kNN blocks, all different (``"distinct"``, sizes varying by up
    to a third) or identical copies of one (``"copies"``), node order randomly permuted."""
    weight = _weight(n_comp, flavour) if weight is None else weight
    rng = np.random.default_rng([seed, n_comp, n, flavour == "copies"])
    base = n // n_comp
    if flavour == "copies":
        assert base * n_comp == n
        blocks = [_connected_blob_graph(base, weight, rng)] * n_comp
    else:
        sizes = np.full(n_comp, base)
        sizes[0] += n - base * n_comp
        for i in range(0, n_comp - 1, 2):
            shift = int(rng.integers(0, base // 3 + 1))
            sizes[i] += shift
            sizes[i + 1] -= shift
        blocks = [_connected_blob_graph(int(s), weight, rng) for s in sizes]
    assert min(b.shape[0] for b in blocks) >= 6
    offsets = np.cumsum([0] + [b.shape[0] for b in blocks])[:-1]
    perm = rng.permutation(n)
    S = sp.block_diag(blocks, format="csr")[perm][:, perm].tocsr()
    count, labels = graph_components(S)
    assert count == n_comp
    if n_comp > 1:  # the components are interleaved, not contiguous
        assert np.any(np.diff(labels) < 0)
    return BlockGraph(S, blocks, offsets, np.argsort(perm), n_comp)


def normalized_affinity(S):
    """``M = D^{-1/2} S D^{-1/2}`` (every node of these graphs has a positive degree)."""
    s = 1.0 / np.sqrt(degree(S))
    return (sp.diags(s) @ S @ sp.diags(s)).tocsr()


OPERATORS = {"M": normalized_affinity, "L": laplacian}


class Reference(NamedTuple):
    """The first eigenpairs in the wanted order (enough to complete every cluster they
    meet), the spectrum's scale ``max |λ|`` and whether ``values`` is the whole spectrum."""

    values: np.ndarray
    vectors: np.ndarray
    scale: float
    complete: bool


def _wanted(w, largest):
    return np.argsort(-w if largest else w, kind="stable")


@functools.cache
def reference(n_comp, n, flavour, op, largest, count):
    """The ``count`` extreme pairs of ``OPERATORS[op](S)`` by dense ``numpy.linalg.eigh``:
    of the whole matrix up to ``DENSE_REFERENCE_MAX``, above of every block (the test knows
    its blocks), mapped through the permutation."""
    g = block_graph(n_comp, n, flavour)
    count = min(count, n)
    if n <= DENSE_REFERENCE_MAX:
        w, U = np.linalg.eigh(OPERATORS[op](g.S).toarray())
        order = _wanted(w, largest)[:count]
        return Reference(w[order], U[:, order], float(np.abs(w).max()), count == n)
    parts = [np.linalg.eigh(OPERATORS[op](B).toarray()) for B in g.blocks]
    w_all = np.concatenate([w for w, _ in parts])
    owner = np.concatenate([np.full(w.size, b) for b, (w, _) in enumerate(parts)])
    local = np.concatenate([np.arange(w.size) for w, _ in parts])
    order = _wanted(w_all, largest)[:count]
    U = np.zeros((n, count))
    for j, i in enumerate(order):
        b = owner[i]
        nodes = g.inv[g.offsets[b] + np.arange(g.blocks[b].shape[0])]
        U[nodes, j] = parts[b][1][:, local[i]]
    return Reference(w_all[order], U, float(np.abs(w_all).max()), count == n)


# --------------------------------------------------------------------------- comparison


def _apply(A, V):
    if isinstance(A, spla.LinearOperator):
        return A.matmat(V)
    return np.asarray(A @ V)


def assert_extreme_pairs(A, w, V, ref, tied=None):
    """``(w, V)`` are the first ``m = len(w)`` pairs of ``ref``, strictly but independently
    of the basis chosen inside a repeated eigenvalue:

    * the values equal the reference's to 1e-9·scale;
    * ``VᵀV = I`` to 1e-8, every residual ``||Av − λv|| ≤ 1e-7·scale``;
    * every cluster of equal reference values (1e-9·scale) inside the first ``m``: the
      projector onto ``V``'s columns equals the reference eigenspace's (spectral norm
      1e-7); the cluster straddling ``m``: ``V``'s columns lie in its eigenspace, and
      ``tied`` (when given) is True; ``tied`` is False when the gap at ``m`` is clear.
    """
    m = w.size
    n = ref.vectors.shape[0]
    scale = ref.scale
    assert V.shape == (n, m)
    np.testing.assert_allclose(w, ref.values[:m], rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(m), rtol=0, atol=1e-8)
    resid = np.linalg.norm(_apply(A, V) - V * w, axis=0)
    assert resid.max() <= 1e-7 * scale, resid.max()
    breaks = np.flatnonzero(np.abs(np.diff(ref.values)) > 1e-9 * scale) + 1
    starts = np.r_[0, breaks]
    ends = np.r_[breaks, ref.values.size]
    straddle = False
    for a, b in zip(starts, ends, strict=True):
        if a >= m:
            break
        assert b < ref.values.size or ref.complete, "the reference ends inside a cluster"
        Vc, Uc = V[:, a : min(b, m)], ref.vectors[:, a:b]
        # ||(I − P_ref) V_c||₂; for equal ranks it is the projectors' distance ||P_V − P_ref||₂
        dist = np.linalg.norm(Vc - Uc @ (Uc.T @ Vc), 2)
        assert dist <= 1e-7, f"cluster {a}:{b} (value {ref.values[a]:.12g}): {dist:.3g}"
        straddle = b > m
    if tied is not None:
        if straddle:
            assert tied, "a tie at the boundary not reported"
        elif m < ref.values.size and abs(ref.values[m] - ref.values[m - 1]) > 1e-6 * scale:
            assert not tied, "a tie reported where there is none"
    return straddle


def _m_values(n_comp):
    """``n_comp + 5`` and, with several components, fewer than ``n_comp`` (the trivial
    eigenvalue then straddles the boundary)."""
    return [n_comp + 5] + ([max(1, n_comp // 2)] if n_comp > 1 else [])


def _count(n_comp):
    """Reference pairs kept: every cluster met by the first ``n_comp + 5`` is complete."""
    return 2 * n_comp + 8


@pytest.fixture
def no_dense_fallback(monkeypatch):
    """Certified Lanczos must be right by itself: a failed check raises instead of being
    recomputed densely."""
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 0)


# --------------------------------------------------------------------------- the builders


def test_block_graph_builder():
    """The reference by blocks equals the dense reference (the two agree where both exist),
    and identical copies repeat every eigenvalue ``n_comp`` times."""
    g = block_graph(9, 360, "copies")
    w = np.sort(np.linalg.eigvalsh(normalized_affinity(g.S).toarray()))[::-1]
    wb = np.linalg.eigvalsh(normalized_affinity(g.blocks[0]).toarray())[::-1]
    np.testing.assert_allclose(w, np.repeat(wb, 9), atol=1e-12)
    for flavour in FLAVOURS:
        ref = reference(9, 360, flavour, "M", True, _count(9))
        g = block_graph(9, 360, flavour)
        parts = [np.linalg.eigh(normalized_affinity(B).toarray()) for B in g.blocks]
        w_all = np.sort(np.concatenate([p[0] for p in parts]))[::-1]
        np.testing.assert_allclose(ref.values, w_all[: _count(9)], atol=1e-12)


# --------------------------------------------------------------------------- per component


@pytest.mark.parametrize("trivial", [True, False], ids=["closed-form", "generic"])
@pytest.mark.parametrize("dense_limit", [10**9, 0], ids=["dense", "lanczos"])
@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize(("n_comp", "n"), SIZES)
def test_component_eigenpairs_normalized_affinity(n_comp, n, flavour, dense_limit, trivial):
    """``M = D^{-1/2} S D^{-1/2}``, largest: with the trivial pairs ``(1, √d)`` in closed
    form (exactly 1), or without (every pair, the unit ones too, by the solver)."""
    g = block_graph(n_comp, n, flavour)
    M = normalized_affinity(g.S)
    ref = reference(n_comp, n, flavour, "M", True, _count(n_comp))
    extra = {"trivial_weights": np.sqrt(degree(g.S)), "trivial_value": 1.0} if trivial else {}
    for m in _m_values(n_comp):
        res = component_eigenpairs(M, m, which="largest", dense_limit=dense_limit, **extra)
        assert res.n_components == n_comp
        straddle = assert_extreme_pairs(M, res.values, res.vectors, ref, res.tied_at_boundary)
        units = res.values == 1.0 if trivial else np.abs(res.values - 1.0) <= 1e-10
        assert np.sum(units) == min(m, n_comp)
        if m < n_comp:
            assert straddle and res.tied_at_boundary


LAPLACIAN_PATHS = {
    "dense": {},
    "lu": {"dense_limit": 5, "lobpcg_min": 10**9},
    "lobpcg": {"dense_limit": 5, "lobpcg_min": 0},
}


@pytest.mark.parametrize("path", list(LAPLACIAN_PATHS))
@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize(("n_comp", "n"), SIZES)
def test_laplacian_eigenpairs(n_comp, n, flavour, path):
    """``L = D − S``, smallest, by the dense, shift-invert LU and LOBPCG block solvers:
    exactly ``n_comp`` zero eigenvalues."""
    g = block_graph(n_comp, n, flavour)
    L = laplacian(g.S)
    ref = reference(n_comp, n, flavour, "L", False, _count(n_comp))
    for m in _m_values(n_comp):
        res = laplacian_eigenpairs(L, m, **LAPLACIAN_PATHS[path])
        assert res.n_components == n_comp
        straddle = assert_extreme_pairs(L, res.values, res.vectors, ref, res.tied_at_boundary)
        assert np.all(np.diff(res.values) >= 0)
        assert np.sum(res.values == 0.0) == min(m, n_comp)
        if m > n_comp:  # the first nonzero one may be small (a heat-weight outlier: 2.6e-6)
            assert res.values[n_comp] > 0.0
        else:
            assert straddle and res.tied_at_boundary


# --------------------------------------------------------------------------- certified Lanczos


EXTREME_CASES = [
    (9, 360, "distinct"),
    (9, 360, "copies"),
    (9, 4050, "distinct"),
    (9, 4050, "copies"),
    (2, 400, "copies"),
]


@pytest.mark.usefixtures("no_dense_fallback")
@pytest.mark.parametrize(("n_comp", "n", "flavour"), EXTREME_CASES)
def test_certified_lanczos_largest_of_normalized_affinity(n_comp, n, flavour):
    """The general certified Lanczos (no component decomposition) finds every unit
    eigenvalue of ``M`` and the right subspaces."""
    g = block_graph(n_comp, n, flavour)
    M = normalized_affinity(g.S)
    ref = reference(n_comp, n, flavour, "M", True, _count(n_comp))
    for m in (n_comp + 5, n_comp, max(1, n_comp // 2)):
        w, V = extreme_eigenvectors(M, m, which="largest", dense_limit=0)
        assert_extreme_pairs(M, w, V, ref)
        assert np.sum(np.abs(w - 1.0) <= 1e-10) == min(m, n_comp)


@pytest.mark.usefixtures("no_dense_fallback")
@pytest.mark.parametrize(("n_comp", "n", "flavour"), EXTREME_CASES)
def test_certified_lanczos_smallest_of_laplacian(n_comp, n, flavour):
    """The same on the smallest side: ``n_comp`` zero eigenvalues of ``L``."""
    g = block_graph(n_comp, n, flavour)
    L = laplacian(g.S)
    ref = reference(n_comp, n, flavour, "L", False, _count(n_comp))
    for m in (n_comp + 5, max(1, n_comp // 2)):
        w, V = extreme_eigenvectors(L, m, which="smallest", dense_limit=0)
        assert_extreme_pairs(L, w, V, ref)
        assert np.sum(np.abs(w) <= 1e-9 * ref.scale) == min(m, n_comp)


def test_certified_lanczos_when_the_wanted_eigenvalues_are_zero():
    """The smallest eigenpair of a connected graph's Laplacian, ``(0, 1/√n)``, at n = 7000
    (above ``DENSE_FALLBACK_LIMIT``: no fallback) and the largest of ``−L``."""
    n = 7000
    assert n > ufs.eigen.DENSE_FALLBACK_LIMIT
    L = laplacian(_connected_blob_graph(n, "binary", np.random.default_rng(0)))
    scale = 2.0 * L.diagonal().max()  # ≥ ||L||₂
    for A, which in ((L, "smallest"), (-L, "largest")):
        w, V = extreme_eigenvectors(A, 1, which=which, dense_limit=0)
        assert abs(w[0]) <= 1e-9 * scale
        assert abs(abs(V[:, 0].sum()) / np.sqrt(n) - 1.0) <= 1e-10


# --------------------------------------------------------------------------- issue 25


@pytest.mark.usefixtures("no_dense_fallback")
def test_issue_25_nine_components_heat_graph():
    """The MCFS failure: a 9-component heat kNN graph (n = 360, like COIL20's), c = 20.
    Plain ``eigsh(M, k=c+1, which="LA")`` may miss unit eigenvalues (not asserted); the
    certified solver, its dense fallback disabled, returns all 9 and the next 12 exactly."""
    c = 20
    g = block_graph(9, 360, "distinct", weight="heat", seed=25)
    M = normalized_affinity(g.S)
    w_ref = np.sort(np.linalg.eigvalsh(M.toarray()))[::-1][: c + 1]
    spla.eigsh(M, k=c + 1, which="LA")  # the original call: whatever it returns
    w, V = extreme_eigenvectors(M, c + 1, which="largest", dense_limit=0)
    assert w.shape == (c + 1,) and V.shape == (360, c + 1)
    assert np.sum(np.abs(w - 1.0) <= 1e-10) == 9
    np.testing.assert_allclose(w[:9], 1.0, rtol=0, atol=1e-10)
    np.testing.assert_allclose(w[9:], w_ref[9:], rtol=0, atol=1e-9)
    np.testing.assert_allclose(V.T @ V, np.eye(c + 1), atol=1e-8)


# --------------------------------------------------------------------------- fallback


def test_dense_fallback_is_never_silent(monkeypatch):
    """A failed certified Lanczos is recomputed densely up to ``DENSE_FALLBACK_LIMIT`` and
    raises ``EigenSolverError`` above, naming the size."""
    monkeypatch.setattr(ufs.eigen, "_certified_lanczos", lambda *a, **k: None)
    g = block_graph(9, 360, "copies")
    M = normalized_affinity(g.S)
    ref = reference(9, 360, "copies", "M", True, _count(9))
    w, V = extreme_eigenvectors(M, 14, which="largest", dense_limit=0)
    assert_extreme_pairs(M, w, V, ref)
    w_dense, V_dense = extreme_eigenvectors(M, 14, which="largest", dense_limit=10**9)
    np.testing.assert_array_equal(w, w_dense)
    np.testing.assert_array_equal(V, V_dense)
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 10)
    with pytest.raises(EigenSolverError, match="360 × 360"):
        extreme_eigenvectors(M, 14, which="largest", dense_limit=0)
    with pytest.raises(EigenSolverError, match="360 × 360"):
        extreme_eigenvectors(laplacian(g.S), 3, which="smallest", dense_limit=0)


def _tied_operator(n: int = 400, copies: int = 300, seed: int = 3):
    """``diag(d)`` with the largest value ``1`` repeated ``copies`` times (UDFS's first
    step on wide data: the null space of a low-rank ``M`` under a constant diagonal) and the
    rest in ``[0, 0.5]``, in a random orthonormal basis."""
    rng = np.random.default_rng(seed)
    lam = np.r_[np.ones(copies), rng.uniform(0.0, 0.5, n - copies)]
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return (Q * lam) @ Q.T, lam


def _complement_failing_after(calls: int, monkeypatch):
    """Make the certification's complement Lanczos fail after ``calls`` successful runs
    (an eigenspace of ~7 000 copies defeated it on allaml: its copies' residuals grew)."""
    real = ufs.eigen._complement_top
    seen = {"n": 0}

    def flaky(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] > calls:
            raise spla.ArpackNoConvergence("no convergence", np.empty(0), np.empty((0, 0)))
        return real(*args, **kwargs)

    monkeypatch.setattr(ufs.eigen, "_complement_top", flaky)


def test_an_uncollectable_tie_above_the_dense_limit_is_flagged_not_raised(monkeypatch):
    """UDFS on allaml (p = 7 129 > DENSE_FALLBACK_LIMIT): the m wanted pairs lie in an
    eigenvalue repeated thousands of times; they pass their residuals, but collecting the
    tied copies fails. Above the dense limit the m pairs are returned (exact eigenpairs of
    the repeated eigenvalue) with a RoundoffSolveWarning, which marks the fit degenerate;
    below it the dense fallback still decides, silently as before."""
    from ufs.base import RoundoffSolveWarning

    A, lam = _tied_operator()
    _complement_failing_after(1, monkeypatch)  # the first tie round works, the next fails
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 100)
    with pytest.warns(RoundoffSolveWarning, match="repeated eigenvalue"):
        w, V = extreme_eigenvectors(A, 3, which="largest", dense_limit=0)
    np.testing.assert_allclose(w, 1.0, atol=1e-10)
    np.testing.assert_allclose(A @ V, V * w, atol=1e-8)
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-10)
    # at or below the limit the dense fallback decides, with no warning
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 10**6)
    _complement_failing_after(1, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoundoffSolveWarning)
        w_dense, _ = extreme_eigenvectors(A, 3, which="largest", dense_limit=0)
    np.testing.assert_allclose(w_dense, 1.0, atol=1e-12)


def test_a_failure_before_any_certified_round_still_raises(monkeypatch):
    """Only a failure while collecting ties is salvaged: when the very first complement
    run fails, nothing is certified, and above the dense limit the solver raises."""
    A, _ = _tied_operator()
    _complement_failing_after(0, monkeypatch)
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 100)
    with pytest.raises(EigenSolverError, match="400 × 400"):
        extreme_eigenvectors(A, 3, which="largest", dense_limit=0)


def test_a_missed_pair_is_not_salvaged(monkeypatch):
    """When the complement finds a pair beyond the m-th (the found pairs were not the
    answer) and the next round fails, the solver raises rather than return them."""
    rng = np.random.default_rng(4)
    n = 300
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    lam = np.r_[2.0, 1.0, 1.0, rng.uniform(0.0, 0.5, n - 3)]
    A = (Q * lam) @ Q.T
    real_eigsh = spla.eigsh
    calls = {"n": 0}

    def first_misses_the_top(op, k, **kwargs):  # ARPACK's first run misses λ = 2
        calls["n"] += 1
        if calls["n"] == 1:
            V = Q[:, 1:3]
            return np.array([1.0, 1.0]), V
        return real_eigsh(op, k, **kwargs)

    monkeypatch.setattr(ufs.eigen.spla, "eigsh", first_misses_the_top)
    _complement_failing_after(1, monkeypatch)
    monkeypatch.setattr(ufs.eigen, "DENSE_FALLBACK_LIMIT", 100)
    with pytest.raises(EigenSolverError):
        extreme_eigenvectors(A, 2, which="largest", dense_limit=0)


# --------------------------------------------------------------------------- missed_pairs


def _planted(n, top, seed):
    """``Q diag(λ) Qᵀ`` with the leading eigenvalues ``top`` and the rest in [−1, 0.9)."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    lam = np.r_[top, rng.uniform(-1.0, 0.9, n - len(top))]
    return (Q * lam) @ Q.T, Q, lam


def test_missed_pairs_finds_the_third_copy():
    """A 3-fold eigenvalue 5 over noise below 1: given 2 of its 3 eigenvectors (in a
    rotated basis), the third copy is reported; given all 3, nothing."""
    A, Q, _ = _planted(200, [5.0, 5.0, 5.0], seed=6)
    R = np.linalg.qr(np.random.default_rng(7).standard_normal((3, 3)))[0]
    E = Q[:, :3] @ R  # another basis of the eigenspace
    t = missed_pairs(A, E[:, :2], 4.0)
    assert t.size == 1
    np.testing.assert_allclose(t, 5.0, rtol=0, atol=1e-9)
    assert missed_pairs(A, E, 4.0).size == 0
    assert missed_pairs(sp.csr_matrix(A), E, 4.0).size == 0
    t1 = missed_pairs(A, E[:, :1], 4.0)  # one given: one or two copies, all of them 5
    assert 1 <= t1.size <= 2
    np.testing.assert_allclose(t1, 5.0, rtol=0, atol=1e-9)


# --------------------------------------------------------------------------- general operator


@pytest.mark.usefixtures("no_dense_fallback")
@pytest.mark.parametrize("which", ["largest", "smallest"])
def test_general_operator_with_a_repeated_extreme_eigenvalue(which):
    """``Q diag(λ) Qᵀ``, λ = [10, 10, 10, 10, 3, 2, 1, …] (negated for the smallest side),
    as a ``LinearOperator``: m = 3 lies inside the 4-fold eigenvalue (tie reported), m = 6
    beyond it."""
    n = 600
    A, Q, lam = _planted(n, [10.0, 10.0, 10.0, 10.0, 3.0, 2.0, 1.0], seed=3)
    sgn = 1.0 if which == "largest" else -1.0
    A = sgn * A
    op = spla.LinearOperator((n, n), matvec=lambda x: A @ x, matmat=lambda X: A @ X)
    order = _wanted(sgn * lam, which == "largest")
    ref = Reference(sgn * lam[order], Q[:, order], 10.0, True)
    for m, tie in ((3, True), (6, False)):
        w, V = extreme_eigenvectors(op, m, which=which, dense_limit=0)
        assert_extreme_pairs(op, w, V, ref)
        res = ufs.eigen._extreme(op, m, which, 0, 0)  # the same call, with its tie flag
        np.testing.assert_array_equal(res.values, w)
        assert res.tied_at_boundary is tie
        assert_extreme_pairs(op, res.values, res.vectors, ref, res.tied_at_boundary)


# --------------------------------------------------------------------------- determinism


def test_determinism():
    """Two calls give the same results, on every path (blocks of 200 nodes: the LOBPCG path
    runs): bit-identical where no ARPACK call is involved; to round-off (1e-9) through
    certified Lanczos, whose ARPACK keeps a random state between calls (restart vectors)
    and whose basis inside a repeated eigenvalue is made canonical (``_canonical_ties``)
    — including the boundary tie of the 7th pair here (two identical components)."""
    g = block_graph(2, 400, "copies")
    M = normalized_affinity(g.S)
    L = laplacian(g.S)
    exact = [
        lambda: extreme_eigenvectors(M, 7, which="largest", dense_limit=10**9),
        lambda: component_eigenpairs(
            M, 7, which="largest", trivial_weights=np.sqrt(degree(g.S)), trivial_value=1.0
        )[:2],
        lambda: laplacian_eigenpairs(L, 7)[:2],
    ]
    for call in exact:
        (w1, V1), (w2, V2) = call(), call()
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(V1, V2)
    lanczos = [
        lambda: extreme_eigenvectors(M, 7, which="largest", dense_limit=0),
        lambda: extreme_eigenvectors(L, 7, which="smallest", dense_limit=0),
        lambda: component_eigenpairs(M, 7, which="largest", dense_limit=0)[:2],
    ] + [lambda kw=kw: laplacian_eigenpairs(L, 7, **kw)[:2] for kw in LAPLACIAN_PATHS.values()]
    for call in lanczos:
        (w1, V1), (w2, V2), (w3, V3) = call(), call(), call()
        for w, V in ((w2, V2), (w3, V3)):
            np.testing.assert_allclose(w, w1, rtol=0, atol=1e-12)
            np.testing.assert_allclose(V, V1, rtol=0, atol=1e-9)
