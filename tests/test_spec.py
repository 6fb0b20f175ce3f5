"""SPEC (Zhao & Liu 2007): the three ranking functions against their definitions (a dense
eigen-expansion), against scikit-feature's SPEC on two inputs (outputs stored with their
inputs in ``tests/reference/spec_skfeature.json`` by ``benchmarks/spec_reference.py``),
the identity φ2 = Laplacian Score, disconnected graphs and ties, planted features."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from tests.conftest import planted_clusters
from ufs.fit_warnings import DegenerateFitWarning, RoundoffSolveWarning
from ufs.graph import knn_graph
from ufs.methods.laplacian_score import laplacian_scores
from ufs.methods.spec import SPEC, spec_scores
from ufs.registry import get_method, make_estimator

REFERENCE = json.loads((Path(__file__).parent / "reference" / "spec_skfeature.json").read_text())
STYLE = {"-1": ("phi1", None), "0": ("phi2", None), "3": ("phi3", 3), "5": ("phi3", 5)}


def _affinity(name: str, X: np.ndarray) -> np.ndarray:
    """The reference's affinity (benchmarks/spec_reference.py)."""
    return rbf_kernel(X, gamma=1) if name == "rbf" else knn_graph(X, 5, weight="heat").toarray()


def _by_definition(X: np.ndarray, W: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """φ1, φ2, φ3 from a dense eigendecomposition of the normalised Laplacian, as the
    paper writes them (Σ_j α_j² λ_j, ..., Σ_{j=2}^k (2 − λ_j) α_j²). The null space is
    rotated so that its first vector is ξ_1 = D^{1/2} 1 / ‖·‖."""
    d = W.sum(axis=1)
    Lh = np.eye(len(d)) - W / np.sqrt(np.outer(d, d))
    lam, U = np.linalg.eigh(Lh)
    xi1 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    zero = int(np.sum(lam < 1e-10))
    Q, _ = np.linalg.qr(np.column_stack([xi1, U[:, :zero]]))
    U[:, :zero] = Q[:, :zero]
    lam[:zero] = 0.0
    F = np.sqrt(d)[:, None] * X
    F /= np.linalg.norm(F, axis=0)
    alpha = U.T @ F  # n × p
    phi1 = (lam[:, None] * alpha**2).sum(axis=0)
    return {
        "phi1": phi1,
        "phi2": phi1 / (1 - alpha[0] ** 2),
        "phi3": ((2 - lam[1:k])[:, None] * alpha[1:k] ** 2).sum(axis=0),
    }


@pytest.mark.parametrize("name", sorted(REFERENCE["inputs"]))
@pytest.mark.parametrize("style", sorted(STYLE))
def test_scores_match_scikit_feature(name, style):
    case = REFERENCE["inputs"][name]
    X = np.asarray(case["X"])
    ref = case["styles"][style]
    ours, tied = spec_scores(X, _affinity(name, X), STYLE[style][0], k=STYLE[style][1])
    assert not tied
    np.testing.assert_allclose(ours, ref["raw"], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", sorted(REFERENCE["inputs"]))
@pytest.mark.parametrize("style", sorted(STYLE))
def test_orders_against_scikit_feature(name, style):
    """skfeature-chappers 1.2.1 ranks every style in descending order of its score (its
    ``feature_ranking`` is called without the style): for φ1 and φ2 that is our
    ``order="skfeature"`` (the reverse of the paper's), for φ3 the paper's order."""
    case = REFERENCE["inputs"][name]
    X = np.asarray(case["X"])
    graph = sp.csr_matrix(_affinity(name, X))
    style_name, k = STYLE[style]
    kw = {"style": style_name, "k": k}
    paper = SPEC(X.shape[1], **kw).fit(X, graph=graph).feature_order_
    skf = SPEC(X.shape[1], order="skfeature", **kw).fit(X, graph=graph).feature_order_
    ref = case["styles"][style]["index"]
    if style_name == "phi3":
        assert list(paper) == ref
        assert list(skf) == ref[::-1]  # scikit-feature's own feature_ranking for style k
    else:
        assert list(skf) == ref and list(paper) == ref[::-1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_forms_equal_the_eigen_expansion(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 5))
    X[:, 1] += np.repeat([0.0, 3.0], 20)
    W = knn_graph(X, 6, weight="heat")
    want = _by_definition(X, W.toarray(), k=4)
    for style in ("phi1", "phi2", "phi3"):
        got, tied = spec_scores(X, W, style, k=4)
        np.testing.assert_allclose(got, want[style], rtol=1e-8, atol=1e-12, err_msg=style)
    # φ2 is the Laplacian Score on the same graph
    np.testing.assert_allclose(spec_scores(X, W, "phi2")[0], laplacian_scores(X, W), rtol=1e-12)


def _components(sizes, rng, p=4):
    """A block-diagonal heat-kernel graph: one complete block per component."""
    blocks, X = [], []
    for m in sizes:
        Z = rng.normal(size=(m, p))
        D2 = ((Z[:, None] - Z[None]) ** 2).sum(-1)
        B = np.exp(-D2 / 4)
        np.fill_diagonal(B, 0)
        blocks.append(B)
        X.append(Z)
    return np.vstack(X), sp.block_diag(blocks).tocsr()


def test_a_disconnected_graph_keeps_the_other_component_indicators(rng):
    X, W = _components([12, 9], rng)
    want = _by_definition(X, W.toarray(), k=4)  # λ = 0 twice: ξ_1 and one more indicator
    got, tied = spec_scores(X, W, "phi3", k=4)
    assert not tied
    np.testing.assert_allclose(got, want["phi3"], rtol=1e-8)


def test_a_nearly_disconnected_graph_takes_the_null_block_by_its_complement(rng):
    """Connected through one edge of weight 1e-13: λ_2 is below the 1e-9 block threshold,
    the trivial vector comes in closed form and the other null direction must still be
    an eigenvector (an eigen-residual check), not whatever a QR of ξ_1 twice gives."""
    X, W = _components([12, 9], rng)
    W = W.tolil()
    W[0, 12] = W[12, 0] = 1e-13
    W = W.tocsr()
    want = _by_definition(X, W.toarray(), k=4)
    got, _ = spec_scores(X, W, "phi3", k=4)
    np.testing.assert_allclose(got, want["phi3"], rtol=1e-6)


def test_a_tie_at_the_boundary_is_marked(rng):
    """Three components: λ = 0 three times, k = 2 keeps one of the two non-trivial
    indicators — which one is arbitrary, so the fit says its answer is round-off's."""
    X, W = _components([8, 8, 8], rng)
    assert spec_scores(X, W, "phi3", k=2)[1]
    assert not spec_scores(X, W, "phi3", k=3)[1]  # the whole block: defined
    with pytest.warns(RoundoffSolveWarning, match="repeated"):
        SPEC(2, k=2).fit(X, graph=W)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoundoffSolveWarning)
        SPEC(2, k=3).fit(X, graph=W)


@pytest.mark.parametrize("style", ["phi1", "phi2", "phi3"])
def test_planted_features_come_first(style):
    X, _, signal = planted_clusters(seed=1)
    est = make_estimator("spec", {"style": style}, n_features_to_select=6, n_clusters=4)
    est.fit(X)
    assert set(est.feature_order_[: len(signal)]) == set(signal)
    # larger scores_ are better, in the order the fit returned
    assert np.all(np.diff(est.scores_[est.feature_order_]) <= 0)


def test_a_feature_without_a_score_is_last():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    W = knn_graph(X[:, :2], 4, weight="heat")
    W = sp.block_diag([W, sp.csr_matrix((1, 1))]).tocsr()  # an isolated sample
    X = np.vstack([X, np.zeros(4)])
    X[:-1, 3] = 0.0
    X[-1, 3] = 5.0  # non-zero only on the isolated node: fᵀ D f = 0
    for style, bad in (("phi1", np.inf), ("phi2", np.inf), ("phi3", -np.inf)):
        assert spec_scores(X, W, style, k=3)[0][3] == bad
        for order in ("paper", "skfeature"):
            est = SPEC(2, style=style, k=3, order=order).fit(X, graph=W)
            assert est.feature_order_[-1] == 3, (style, order)


def test_bad_parameters_are_one_clear_error(rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="style must be one of"):
        SPEC(2, style="phi4").fit(X)
    with pytest.raises(ValueError, match="order must be one of"):
        SPEC(2, order="up").fit(X)
    with pytest.raises(ValueError, match="needs k or n_clusters"):
        SPEC(2).fit(X)
    with pytest.raises(ValueError, match="1 <= k <= n_samples - 1"):
        SPEC(2, k=20).fit(X)
    with pytest.warns(DegenerateFitWarning, match="k = 1"):  # one cluster: no eigenvector
        est = SPEC(2, n_clusters=1).fit(X)
    assert list(est.feature_order_) == [0, 1, 2] and np.all(est.spec_values_ == 0)


def test_registered_with_its_grid_and_a_variant_for_scikit_features_order():
    spec = get_method("spec")
    assert spec.grid == {"style": ["phi1", "phi2", "phi3"]} and spec.defaults["style"] == "phi3"
    skf = get_method("spec_skfeature")
    assert skf.role == "variant" and skf.variant_of == "spec"
    assert skf.defaults["order"] == "skfeature" and skf.defaults["style"] == "phi2"


@pytest.mark.parametrize("bridge", [None, 1e-13, 1e-3])
def test_the_normalised_affinity_pairs_are_eigenpairs_with_xi1_first(rng, bridge):
    """Every returned column is an eigenvector of D^{-1/2} S D^{-1/2} (residual), the
    columns are orthonormal and the first is ξ_1: on two components, on two joined by an
    edge of weight 1e-13 (λ_2 inside the block tolerance) and by a real edge."""
    from ufs.methods._spectral import normalized_affinity_pairs

    X, W = _components([12, 9], rng)
    if bridge is not None:
        W = W.tolil()
        W[0, 12] = W[12, 0] = bridge
        W = W.tocsr()
    d = np.asarray(W.sum(axis=1)).ravel()
    w, U, _ = normalized_affinity_pairs(W, 4, d)
    M = W.toarray() / np.sqrt(np.outer(d, d))
    assert np.linalg.norm(M @ U - U * w, axis=0).max() < 1e-8
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(U[:, 0], np.sqrt(d) / np.linalg.norm(np.sqrt(d)), atol=1e-12)
