"""LAPACK failures that round-off can cause, and the fallbacks that keep a fit alive.

Two fits crashed in the benchmark runs: K-means UFS on leukemia (``gesdd``: "SVD did not
converge") and RUFS on pixraw10p at α/β = 1e12 (Cholesky: "not positive definite" on
``XᵀX + 1e-12 I``). :func:`ufs.linalg._polar_svd` falls back to ``gesvd``;
:func:`ufs.linalg.floored_spd_solve` falls back to an eigendecomposition floored at the
bound the exact matrix satisfies, warns, and the workflow marks the fit degenerate.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

from ufs import linalg
from ufs.base import RoundoffSolveWarning
from ufs.linalg import floored_spd_solve
from ufs.methods._nonneg_spectral import ridge_solve
from ufs.methods.rsr import rsr_irls
from ufs.pipeline.status import fit_status


def _low_rank(n: int, p: int, r: int, scale: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((n, r)) @ rng.standard_normal((r, p))


@pytest.mark.parametrize("lower", [False, True])
def test_floored_solve_is_cholesky_when_cholesky_succeeds(lower):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((30, 12))
    M = A.T @ A + 0.5 * np.eye(12)
    B = rng.standard_normal((12, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback, no warning
        got = floored_spd_solve(M, B, 0.5, lower=lower)
    want = sla.cho_solve(sla.cho_factor(M, lower=lower), B)
    np.testing.assert_array_equal(got, want)


def test_floored_solve_raises_roundoff_eigenvalues_to_the_bound():
    """A matrix whose exact form is ⪰ floor·I but whose stored form has negative
    eigenvalues: Cholesky fails, the answer is ``Q max(Λ, floor)⁻¹ Qᵀ B``, and a
    RoundoffSolveWarning names how many eigenvalues were raised."""
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    lam = np.array([-3e-9, -1e-10, 1e-12, 0.5, 1.0, 2.0, 4.0, 8.0])
    M = (Q * lam) @ Q.T
    B = rng.standard_normal((8, 3))
    with pytest.raises(np.linalg.LinAlgError):
        sla.cho_factor(M)
    with pytest.warns(RoundoffSolveWarning, match=r"3 eigenvalue\(s\) raised to the bound"):
        got = floored_spd_solve(M, B, 1e-6)
    want = (Q / np.maximum(lam, 1e-6)) @ (Q.T @ B)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.warns(RoundoffSolveWarning):
        got1 = floored_spd_solve(M, B[:, 0], 1e-6)  # a vector right-hand side
    np.testing.assert_allclose(got1, want[:, 0], rtol=1e-6)


@pytest.mark.parametrize("path", ["primal", "woodbury"])
def test_ridge_solve_survives_a_ridge_below_roundoff(path):
    """``(XᵀRX + B)⁻¹XᵀRY`` with a rank-deficient ``X`` of scale 1e3 and a ridge 1e-12 below
    it (RUFS at α/β = 1e12, pixraw10p's failure): ``B = 1e-12 I`` on the primal ``p × p``
    system (``p ≤ n``), ``R = 1e12 I`` on Woodbury's ``n × n`` one (``p > n``, ridge
    ``R⁻¹``). Cholesky alone fails on both; the fallback warns (the fit is marked
    degenerate) and returns a finite ``W``. On the primal system that ``W`` is the
    solution's limit (``XW`` = the projection of ``Y`` onto the range of ``X``); Woodbury's
    ``B⁻¹XᵀK⁻¹Y`` multiplies ``K⁻¹``'s 1e12-sized components along ``null(Xᵀ)`` by a
    round-off-sized ``Xᵀ``, so its ``W`` is round-off's, which is why the fit is flagged."""
    n, p = (80, 40) if path == "primal" else (20, 60)
    X = _low_rank(n, p, 10, 1e3)
    Y = np.random.default_rng(3).standard_normal((n, 3))
    b, r = (np.full(p, 1e-12), None) if path == "primal" else (np.ones(p), np.full(n, 1e12))
    M = X.T @ X + np.diag(b) if path == "primal" else X @ X.T + np.diag(1.0 / r)
    with pytest.raises(np.linalg.LinAlgError):
        sla.cho_factor(M)
    with pytest.warns(RoundoffSolveWarning, match="raised to the bound"):
        W = ridge_solve(X, b, Y, r)
    assert np.all(np.isfinite(W))
    if path == "woodbury":
        return
    proj = X @ np.linalg.lstsq(X, Y, rcond=None)[0]
    np.testing.assert_allclose(X @ W, proj, atol=1e-6 * np.abs(proj).max())


def test_a_fit_that_warned_degenerate_is_marked_degenerate():
    warned = ["RoundoffSolveWarning: Cholesky failed on a 40x40 system ... raised to the bound"]
    assert fit_status({"converged": True}, warnings=warned) == "degenerate"
    assert fit_status({"converged": True}, warnings=[]) == "ok"
    # a ranking's own round-off warning names an h above which it is degenerate: the row
    # at a smaller h stays ok (resolved_rank decides), so not every DegenerateFitWarning
    # marks the fit
    ranking = ["DegenerateFitWarning: RSR: only 823 of 4000 features have a row weight ..."]
    info = {"converged": True, "resolved_rank": 823}
    assert fit_status(info, warnings=ranking, h=100) == "ok"
    assert fit_status(info, warnings=ranking, h=900) == "degenerate"
    # a divergence still outranks it
    assert fit_status({"diverged": True}, warnings=warned) == "diverged"


def test_rsr_survives_a_failed_cholesky():
    """RSR's re-weighted system ``XᵀG_rX + λG_l`` on a rank-deficient ``X`` at a tiny λ:
    both solvers end with finite scores (the primal one through the fallback)."""
    X = _low_rank(60, 30, 5, 1e3, seed=4)
    for solver in ("primal", "woodbury"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = rsr_irls(X, 1e-12, max_iter=5, solver=solver)
        assert np.all(np.isfinite(out["scores"])), solver


def test_polar_factor_falls_back_to_gesvd(monkeypatch):
    """``gesdd`` failing (K-means UFS on leukemia) is retried with ``gesvd``; the result
    is the polar factor: orthonormal columns, ``UᵀH`` symmetric positive semidefinite."""
    H = np.random.default_rng(5).standard_normal((50, 6))
    real_svd = sla.svd
    drivers: list[str] = []

    def flaky_svd(a, *args, lapack_driver="gesdd", **kwargs):
        drivers.append(lapack_driver)
        if lapack_driver == "gesdd":
            raise np.linalg.LinAlgError("SVD did not converge")
        return real_svd(a, *args, lapack_driver=lapack_driver, **kwargs)

    monkeypatch.setattr(linalg.sla, "svd", flaky_svd)
    U = linalg._polar_svd(H)
    assert drivers == ["gesdd", "gesvd"]
    np.testing.assert_allclose(U.T @ U, np.eye(6), atol=1e-12)
    S = U.T @ H
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    assert np.linalg.eigvalsh(S).min() > -1e-12


def test_every_dense_cholesky_and_svd_goes_through_the_fallbacks():
    """Shared math once: a Cholesky or an SVD written directly in a solver would crash
    where these fallbacks survive."""
    import ufs

    root = Path(ufs.__file__).parent
    direct = [
        f"{path.relative_to(root)}:{i}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "linalg.py"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bcho_factor\(|\bsvd\(", line) and "thin_svd(" not in line
    ]
    assert direct == []
