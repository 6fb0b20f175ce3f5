import numpy as np
import pytest

from ufs.metrics import (
    ari,
    clustering_accuracy,
    coverage_probability_at,
    nmi,
    normalized_entropy,
    true_positives_at,
)


def test_permuted_labels_are_perfect():
    y = np.array([0, 0, 1, 1, 2, 2, 2])
    pred = np.array([2, 2, 0, 0, 1, 1, 1])
    assert clustering_accuracy(y, pred) == 1.0
    assert nmi(y, pred) == pytest.approx(1.0)
    assert nmi(y, pred, average="max") == pytest.approx(1.0)
    assert ari(y, pred) == pytest.approx(1.0)


def test_accuracy_known_confusion():
    # confusion (true x pred) = [[3,1],[2,4]]: best matching keeps the diagonal, 7/10
    y = np.array([0] * 4 + [1] * 6)
    pred = np.array([0, 0, 0, 1] + [0, 0, 1, 1, 1, 1])
    assert clustering_accuracy(y, pred) == pytest.approx(0.7)
    # swapping predicted names changes nothing
    assert clustering_accuracy(y, 1 - pred) == pytest.approx(0.7)


def test_accuracy_with_more_clusters_than_classes():
    y = np.array([0, 0, 0, 1, 1, 1])
    pred = np.array([0, 0, 2, 1, 1, 1])
    assert clustering_accuracy(y, pred) == pytest.approx(5 / 6)


def test_nmi_by_hand():
    # y = [0,0,1,1], pred = [0,0,0,1]: H(y)=ln2, H(p)=H(3/4,1/4), MI = H(p) - H(p|y)
    y = np.array([0, 0, 1, 1])
    pred = np.array([0, 0, 0, 1])
    hy = np.log(2)
    hp = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    mi = hp - 0.5 * np.log(2)  # given y=1 the prediction is a fair coin
    assert nmi(y, pred) == pytest.approx(2 * mi / (hy + hp))
    assert nmi(y, pred, average="max") == pytest.approx(mi / max(hy, hp))
    with pytest.raises(ValueError, match="average"):
        nmi(y, pred, average="bogus")


def test_normalized_entropy():
    assert normalized_entropy([0, 1, 2, 0, 1, 2]) == pytest.approx(1.0)
    assert normalized_entropy([0, 0, 0, 0], n_clusters=3) == 0.0
    # sizes 3,1 with c=2: -(3/4 ln 3/4 + 1/4 ln 1/4)/ln 2
    expected = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25)) / np.log(2)
    assert normalized_entropy([0, 0, 0, 1]) == pytest.approx(expected)
    # an empty cluster among c=3 lowers NE
    assert normalized_entropy([0, 1, 0, 1], n_clusters=3) == pytest.approx(np.log(2) / np.log(3))


def test_tp_and_cp():
    truth = [1, 2, 3]
    rankings = [[1, 2, 3, 4, 5], [4, 1, 5, 2, 3], [9, 8, 7, 1, 2]]
    assert true_positives_at(rankings, truth, 3) == pytest.approx((3 + 1 + 0) / 3)
    assert coverage_probability_at(rankings, truth, 3) == pytest.approx(1 / 3)
    assert coverage_probability_at(rankings, truth, 5) == pytest.approx(2 / 3)


def test_length_mismatch():
    with pytest.raises(ValueError, match="differ in length"):
        clustering_accuracy([0, 1], [0, 1, 1])


def _label_pairs(seed=0, trials=400):
    """Random label pairs with the cases that have their own branch: one class, one
    cluster, both, identical labellings, labels that are not 0..k-1, a large n."""
    rng = np.random.default_rng(seed)
    for t in range(trials):
        n = int(rng.integers(1, 200))
        yt, yp = rng.integers(0, rng.integers(1, 9), n), rng.integers(0, rng.integers(1, 9), n)
        if t % 5 == 0:
            yp = (yt + rng.integers(0, 2, n)) % 4  # related labellings
        if t % 7 == 0:
            yp = 10 * yt - 3  # the same partition under other names
        yield yt, yp
    yield np.zeros(6, int), np.zeros(6, int)
    yield np.zeros(6, int), np.arange(6)
    yield np.array(list("aabbcc")), np.array([5, 5, 7, 7, 7, 9])
    yt = rng.integers(0, 10, 20_000)
    yield yt, (yt + rng.integers(0, 3, yt.size)) % 10


def test_pair_metrics_equal_scikit_learns_to_the_last_bit():
    """One contingency table per clustering gives scikit-learn's values exactly,
    so the archived benchmark's numbers stand."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    for yt, yp in _label_pairs():
        for average in ("arithmetic", "max", "geometric", "min"):
            assert nmi(yt, yp, average) == normalized_mutual_info_score(
                yt, yp, average_method=average
            )
        assert ari(yt, yp) == adjusted_rand_score(yt, yp)


def test_clustering_scores_are_the_single_metrics():
    from ufs.metrics import clustering_scores, contingency

    for yt, yp in _label_pairs(seed=1, trials=60):
        k = len(np.unique(yp)) + 1  # an empty cluster counts in NE
        got = clustering_scores(yt, yp, nmi_average="max", n_clusters=k)
        assert got == {
            "acc": clustering_accuracy(yt, yp),
            "nmi": nmi(yt, yp, "max"),
            "ari": ari(yt, yp),
            "ne": normalized_entropy(yp, n_clusters=k),
        }
    C = contingency(["b", "a", "a", "c"], [1, 1, 0, 0])
    assert C.tolist() == [[1, 1], [0, 1], [1, 0]] and C.dtype == np.int64
