"""The neural selectors (CAE, IP-CAE, LS-CAE): the distinct-selection rule by brute force,
the annealing schedule, determinism, the recorded facts of a fit, planted features
recovered where the Laplacian Score recovers them, and LS-CAE's Laplacian term against a
dense reference. The rule and the schedule need no PyTorch; the rest skip without it."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from ufs.fit_warnings import DegenerateFitWarning
from ufs.methods._concrete import CONFIDENCE_TARGET, distinct_selection, temperature
from ufs.registry import get_method, make_estimator

NEURAL = ("cae", "ipcae", "lscae")


# -- no PyTorch needed -------------------------------------------------------------------
def test_distinct_selection_keeps_argmax_when_distinct():
    P = np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]])
    chosen, dup = distinct_selection(P)
    assert chosen.tolist() == [1, 0] and dup == 0


def test_distinct_selection_duplicate_takes_next_best_of_less_confident_node():
    # both nodes prefer feature 0; node 1 is more confident, so node 0 yields to feature 2
    P = np.array([[0.5, 0.1, 0.4], [0.9, 0.05, 0.05]])
    chosen, dup = distinct_selection(P)
    assert chosen.tolist() == [2, 0] and dup == 1


@pytest.mark.parametrize("seed", range(20))
def test_distinct_selection_against_brute_force(seed):
    """The rule equals a literal reading of it on small random problems: visit nodes by
    decreasing confidence, each takes its most probable free feature."""
    rng = np.random.default_rng(seed)
    k, d = rng.integers(1, 5), rng.integers(5, 8)
    # few distinct values: duplicates and ties are frequent
    P = rng.integers(0, 4, size=(k, d)).astype(float) + 1e-3 * np.arange(d)[::-1]
    P /= P.sum(axis=1, keepdims=True)
    chosen, dup = distinct_selection(P)
    assert len(set(chosen.tolist())) == k
    assert dup == k - len(set(P.argmax(axis=1).tolist()))
    taken: set[int] = set()
    for i in sorted(range(k), key=lambda i: (-P[i].max(), i)):
        best = max((j for j in range(d) if j not in taken), key=lambda j: (P[i, j], -j))
        assert chosen[i] == best
        taken.add(best)
    # the selected set is a set of k distinct features: no permutation of it repeats one
    assert all(len(set(c)) == k for c in itertools.permutations(chosen.tolist()))


def test_distinct_selection_refuses_more_nodes_than_features():
    with pytest.raises(ValueError, match="distinct"):
        distinct_selection(np.full((3, 2), 0.5))


def test_temperature_schedule_is_exponential_between_its_ends():
    assert temperature(0, 100, 10.0, 0.1) == pytest.approx(10.0)
    assert temperature(100, 100, 10.0, 0.1) == pytest.approx(0.1)
    assert temperature(250, 100, 10.0, 0.1) == pytest.approx(0.1)
    assert temperature(50, 100, 10.0, 0.1) == pytest.approx(1.0)  # geometric midpoint
    ts = [temperature(s, 40, 10.0, 0.01) for s in range(41)]
    ratios = np.array(ts[1:]) / np.array(ts[:-1])
    assert np.allclose(ratios, ratios[0])  # T(b+1)/T(b) constant


def test_registered_with_their_papers_and_budgets():
    for name in NEURAL:
        spec = get_method(name)
        assert spec.kind == "subset" and spec.grid == {}
        assert spec.cls.requires == ("torch",) and "neural" in spec.cls.install_hint
        assert spec.reference and spec.defaults["epochs"] > 0
    assert get_method("cae").defaults == {"epochs": 300, "batch_size": None, "tryout_limit": 1}
    assert get_method("lscae").defaults == {"epochs": 500, "batch_size": 64}


def test_registry_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, ufs; from ufs.registry import available_methods, get_method; "
        "available_methods(); get_method('cae'); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- with PyTorch ------------------------------------------------------------------------
torch = pytest.importorskip("torch", reason="the neural extra is not installed")

SHORT = {"cae": {"epochs": 4, "tryout_limit": 1}, "ipcae": {"epochs": 4}, "lscae": {"epochs": 4}}


def _z(X):
    return (X - X.mean(0)) / X.std(0)


def planted(seed: int = 0, n: int = 240, groups: int = 3, per: int = 6, nuisance: int = 6):
    """Three clusters; ``groups`` independent latent factors whose means depend on the
    cluster, each observed through ``per`` noisy copies (features ``0 .. groups·per − 1``),
    then ``nuisance`` independent noise features. One copy per group reconstructs the rest
    of its group, so a reconstruction-based selector of ``k = groups`` nodes should take one
    feature per group and no noise feature."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n // 3)
    centers = rng.normal(scale=3.0, size=(3, groups))
    Z = centers[y] + rng.normal(size=(n, groups))
    informative = np.repeat(Z, per, axis=1) + 0.3 * rng.normal(size=(n, groups * per))
    return _z(np.hstack([informative, rng.normal(size=(n, nuisance))])), groups * per


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X = load_digits().data[:300]
    return _z(X[:, X.std(0) > 0])


@pytest.mark.parametrize("name", NEURAL)
def test_same_seed_same_fit_and_facts(name, digits):
    fits = [
        make_estimator(name, SHORT[name], n_features_to_select=6, random_state=3).fit(digits)
        for _ in range(2)
    ]
    a, b = fits
    assert np.array_equal(a.selected_features_, b.selected_features_)
    assert np.array_equal(a.objective_, b.objective_)
    assert a.n_iter_ == 4 and a.objective_.shape == (4,) and np.isfinite(a.objective_).all()
    assert a.selection_probabilities_.shape == (6, digits.shape[1])
    assert np.allclose(a.selection_probabilities_.sum(axis=1), 1.0)
    assert a.converged_ == (a.selection_confidence_ >= CONFIDENCE_TARGET)
    dup = 6 - np.unique(a.selection_probabilities_.argmax(axis=1)).size
    assert a.n_duplicates_ == dup and a.degenerate_ == (dup > 0)
    assert len(set(a.selected_features_.tolist())) == 6
    # torch's global state is left as it was
    assert not torch.are_deterministic_algorithms_enabled()


def test_a_different_seed_gives_a_different_training_run(digits):
    a = make_estimator("ipcae", SHORT["ipcae"], n_features_to_select=6, random_state=0)
    b = make_estimator("ipcae", SHORT["ipcae"], n_features_to_select=6, random_state=1)
    assert not np.array_equal(a.fit(digits).objective_, b.fit(digits).objective_)


def test_duplicates_are_replaced_warned_and_marked():
    # 5 nodes over 6 features after one epoch: nodes collide; whatever happens, the rule
    # holds and a collision is said
    X = _z(np.random.default_rng(0).normal(size=(40, 6)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fits = [
            make_estimator(
                "cae", {"epochs": 1, "tryout_limit": 1}, n_features_to_select=5, random_state=s
            ).fit(X)
            for s in range(6)
        ]
    flagged = [f for f in fits if f.n_duplicates_]
    assert flagged, "no collision in six seeds: the test lost its subject"
    degenerate = [w for w in caught if issubclass(w.category, DegenerateFitWarning)]
    assert len(degenerate) == len(flagged)
    for f in fits:
        assert f.support_.sum() == 5 and f.degenerate_ == bool(f.n_duplicates_)


def test_cae_retrains_with_twice_the_epochs_until_confident(digits):
    est = make_estimator(
        "cae", {"epochs": 1, "tryout_limit": 3}, n_features_to_select=4, random_state=0
    ).fit(digits)
    # one epoch never reaches 0.998 on digits: three runs of 1, 2 and 4 epochs
    assert not est.converged_ and est.n_attempts_ == 3 and est.n_iter_ == 4
    assert est.objective_.shape == (4,)


def test_unconverged_fit_is_marked_not_converged(digits):
    from ufs.pipeline.status import fit_status

    est = make_estimator("cae", SHORT["cae"], n_features_to_select=4, random_state=0).fit(digits)
    assert not est.converged_
    assert fit_status({"converged": est.converged_}, est.objective_) == "not_converged"


@pytest.mark.parametrize("name", NEURAL)
def test_planted_features_recovered_where_laplacian_score_recovers_them(name):
    X, m = planted(seed=1)
    ls = make_estimator("laplacian_score", {}, n_features_to_select=3).fit(X)
    assert (ls.selected_features_ < m).all()  # the premise: the Laplacian Score does
    budget = {"cae": {"epochs": 100, "tryout_limit": 1}, "ipcae": {"epochs": 100}}
    est = make_estimator(
        name, budget.get(name, {"epochs": 100}), n_features_to_select=3, random_state=0
    )
    sel = est.fit(X).selected_features_
    assert (sel < m).all(), f"{name} selected a noise feature: {sel}"
    if name != "cae":  # within 100 epochs the CAE's nodes are not yet one per group
        assert sorted(sel // 6) == [0, 1, 2], f"{name} did not take one feature per group: {sel}"


def test_lscae_laplacian_term_matches_a_dense_reference():
    from ufs.methods.lscae import LSConcreteAutoencoder

    rng = np.random.default_rng(0)
    xt = rng.normal(size=(12, 5))
    sq = ((xt[:, None, :] - xt[None, :, :]) ** 2).sum(-1)
    nn = np.sort(np.sqrt(sq) + np.diag(np.full(12, np.inf)), axis=1)[:, 0]
    W = np.exp(-sq / nn.max() ** 2)
    P = W / W.sum(axis=1, keepdims=True)
    want = np.trace(xt.T @ P @ P @ xt)
    got = LSConcreteAutoencoder._laplacian_term(torch, torch.as_tensor(xt, dtype=torch.float64))
    assert float(got) == pytest.approx(want, rel=1e-10)


def test_ipcae_logits_are_a_shared_linear_map_of_embeddings():
    from ufs.methods.cae import IPConcreteAutoencoder

    est = IPConcreteAutoencoder(embedding_dim=7)
    params = est._logit_params(torch, 4, 30, torch.Generator().manual_seed(0))
    psi, W, b = params
    assert psi.shape == (4, 7) and W.shape == (30, 7) and b.shape == (30,)
    L = est._logits(params)
    assert torch.allclose(L[2], W @ psi[2] + b)
    assert IPConcreteAutoencoder()._logit_params(torch, 2, 500, torch.Generator())[0].shape == (
        2,
        256,
    )


@pytest.mark.parametrize(
    "name, bad",
    [
        ("cae", {"epochs": 0}),
        ("cae", {"dropout": 1.0}),
        ("lscae", {"batch_size": -1}),
        ("lscae", {"batch_size": 1}),
        ("ipcae", {"learning_rate": float("nan")}),
        ("lscae", {"redundancy_penalty": -1.0}),
    ],
)
def test_bad_training_parameters_are_refused(name, bad, digits):
    with pytest.raises(ValueError, match=next(iter(bad))):
        make_estimator(name, bad, n_features_to_select=2).fit(digits)


def test_the_default_run_fits_them_where_torch_is_installed():
    """The default config lists the neural selectors; with PyTorch here the workflow's plan
    (``skip_unavailable``, as ``common.smk`` builds it) keeps them, on every data set."""
    import yaml

    from ufs.pipeline.config import build_plan

    from .conftest import REPO

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    plan = build_plan(config, warn=False, skip_unavailable=True)
    assert not plan.unavailable
    for name in NEURAL:
        assert name in plan.settings
        assert all(plan.dataset_settings(name, d) for d in plan.instances)


def test_minibatches_cover_every_sample_once_and_are_counted_right():
    from ufs.methods._concrete import ConcreteSelector

    gen = torch.Generator().manual_seed(0)
    for n, b in [(2, 16), (17, 16), (33, 16), (64, 64), (65, 64), (1797, 16), (10, 1)]:
        pieces = ConcreteSelector._batches(torch, n, b, gen)
        assert [p.numel() for p in pieces] == ConcreteSelector._batch_sizes(n, b)
        assert sorted(torch.cat(pieces).tolist()) == list(range(n))
        assert min(p.numel() for p in pieces) >= min(2, n, b)  # no lone sample but by choice
