"""The published numbers in ``config/published/*.csv``: format, names, ranges and a few
cells checked against the papers (``shared/papers/*.md``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ufs.datasets import available_datasets
from ufs.registry import available_methods

PUBLISHED = Path(__file__).resolve().parents[1] / "config" / "published"
COLUMNS = ["paper", "table", "dataset", "method", "metric", "h", "value", "std", "note"]
KEY = ["paper", "table", "dataset", "method", "metric", "h"]

#: rows per file = datasets x methods x metrics of the transcribed tables
ROWS = {
    "kmeans_ufs": 84,  # Tables III-IV: 6 datasets x 7 methods x {acc, nmi}
    "dgufs": 96,  # Tables 2-3: 6 datasets x 8 methods x {acc, nmi}
    "golfs": 132,  # Table 1: 2 x 5 x 6 (tp, cp at 10/30/60); Tables 2 and 4: 2 x 6 x 3 each
    "fsbc": 144,  # Tables 2-4: 6 datasets x 8 methods x {acc, nmi, ne}
}

#: compared methods of the papers that ufs does not implement, and why
NOT_IMPLEMENTED = {
    "lrpfs": "FSBC Tables 2-4 baseline: Zheng et al., 'Low-rank structure preserving for "
    "UFS', Neurocomputing 2018; no text or code available here. (ufs's lrpfs_ma2024 is the "
    "huangyulei1/LRPFS code, a different method of the same acronym)",
}

FRACTION_METRICS = {"acc", "nmi", "ari", "ne", "cp"}
H_LABELS = {
    "all",  # all_features: no selection
    "best",  # best over the paper's h grid (see note)
    "mean",  # average over the paper's h grid (see note)
    "unstated",  # the paper does not say (see note)
}


def load(paper: str) -> pd.DataFrame:
    return pd.read_csv(PUBLISHED / f"{paper}.csv", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module", params=sorted(ROWS))
def table(request) -> tuple[str, pd.DataFrame]:
    return request.param, load(request.param)


def test_every_csv_is_listed():
    assert sorted(p.stem for p in PUBLISHED.glob("*.csv")) == sorted(ROWS)
    readme = (PUBLISHED / "README.md").read_text()
    for paper in ROWS:
        assert f"{paper}.csv" in readme


def test_columns_and_row_count(table):
    paper, df = table
    assert list(df.columns) == COLUMNS
    assert len(df) == ROWS[paper]
    assert (df["paper"] == paper).all()
    for col in ("table", "dataset", "method", "metric", "h", "value"):
        assert (df[col] != "").all(), f"{paper}: empty {col}"


def test_no_duplicate_keys(table):
    paper, df = table
    dup = df[df.duplicated(KEY, keep=False)]
    assert dup.empty, f"{paper}: duplicate rows\n{dup[KEY]}"


def test_methods_are_known(table):
    paper, df = table
    known = set(available_methods()) | set(NOT_IMPLEMENTED)
    unknown = sorted(set(df["method"]) - known)
    assert not unknown, f"{paper}: methods neither registered nor allow-listed: {unknown}"


def test_the_not_implemented_list_names_no_registered_method():
    """An allow-listed method that is registered would hide its removal from the registry."""
    assert not set(NOT_IMPLEMENTED) & set(available_methods())


def test_datasets_are_registered(table):
    paper, df = table
    unknown = sorted(set(df["dataset"]) - set(available_datasets()))
    assert not unknown, f"{paper}: unregistered datasets {unknown}"


def test_h_labels(table):
    paper, df = table
    for h, method in zip(df["h"], df["method"], strict=True):
        assert h.isdigit() or h in H_LABELS, f"{paper}: bad h {h!r}"
        assert (h == "all") == (method == "all_features"), f"{paper}: {method} with h={h}"
    # every non-numeric h except "all" is explained in the note
    other = df[~df["h"].str.isdigit() & (df["h"] != "all")]
    assert (other["note"] != "").all()


def test_values_in_range(table):
    paper, df = table
    assert set(df["metric"]) <= FRACTION_METRICS | {"tp"}
    value = df["value"].astype(float)
    std = pd.to_numeric(df["std"].replace("", None))
    frac = df["metric"].isin(FRACTION_METRICS)
    assert value[frac].between(0.0, 1.0).all()
    assert (std[frac].dropna().between(0.0, 1.0)).all()
    tp = df[df["metric"] == "tp"]
    for h, v in zip(tp["h"], tp["value"].astype(float), strict=True):
        assert h.isdigit() and 0.0 <= v <= min(int(h), 10)  # 10 planted features (GOLFS §3.1)


@pytest.mark.parametrize(
    "paper, table_, dataset, method, metric, h, value, std",
    [
        # K-means UFS Table III / IV
        ("kmeans_ufs", "III", "micromass", "kmeans_ufs", "acc", "best", 0.523, 0.0565),
        ("kmeans_ufs", "III", "gina", "rufs", "acc", "best", 0.495, 0.0242),
        ("kmeans_ufs", "IV", "fabert", "all_features", "nmi", "all", 0.029, 0.0113),
        ("kmeans_ufs", "IV", "dilbert", "sf2sog", "nmi", "best", 0.161, 0.0122),
        # DGUFS Tables 2 / 3 (number in parentheses -> note)
        ("dgufs", "2", "umist", "all_features", "acc", "all", 0.421, 0.023),
        ("dgufs", "2", "pixraw10p", "dgufs", "acc", "best", 0.821, 0.0498),
        ("dgufs", "3", "allaml", "ndfs", "nmi", "best", 0.0720, 0.0030),
        ("dgufs", "3", "warppie10p", "mcfs", "nmi", "best", 0.543, 0.0339),
        # GOLFS Tables 1, 2, 4
        ("golfs", "1", "golfs_sim1", "golfs", "tp", "10", 8.81, None),
        ("golfs", "1", "golfs_sim2", "rsr", "tp", "60", 0.01, None),
        ("golfs", "1", "golfs_sim2", "golfs", "cp", "60", 0.72, None),
        ("golfs", "2", "golfs_sim1", "all_features", "acc", "all", 0.3162, 0.0279),
        ("golfs", "2", "golfs_sim2", "ndfs", "nmi", "mean", 0.517, 0.067),
        ("golfs", "4", "bbc", "golfs", "acc", "unstated", 0.580, None),
        ("golfs", "4", "yale", "rsr", "ari", "unstated", 0.067, None),
        # FSBC Tables 2-4
        ("fsbc", "2", "jaffe", "fsbc", "acc", "mean", 0.8653, None),
        ("fsbc", "3", "20ng", "lrpfs", "nmi", "mean", 0.0888, None),
        ("fsbc", "4", "mfeat_fac", "urafs", "ne", "mean", 0.9896, None),
        ("fsbc", "4", "mnist4000", "all_features", "ne", "all", 0.9810, None),
    ],
)
def test_spot_checks(paper, table_, dataset, method, metric, h, value, std):
    df = load(paper)
    row = df[
        (df["table"] == table_)
        & (df["dataset"] == dataset)
        & (df["method"] == method)
        & (df["metric"] == metric)
        & (df["h"] == h)
    ]
    assert len(row) == 1
    row = row.iloc[0]
    assert float(row["value"]) == pytest.approx(value, abs=1e-12)
    if std is None:
        assert row["std"] == ""
    else:
        assert float(row["std"]) == pytest.approx(std, abs=1e-12)


def test_notes_keep_the_papers_names_and_best_h():
    dg = load("dgufs")
    r = dg[(dg["table"] == "2") & (dg["dataset"] == "allaml") & (dg["method"] == "dgufs")]
    assert "h=200" in r.iloc[0]["note"]  # 78.4±1.31(200)
    r = dg[(dg["table"] == "3") & (dg["dataset"] == "pixraw10p") & (dg["method"] == "eufs")]
    assert "h=50" in r.iloc[0]["note"] and "PIX 10P" in r.iloc[0]["note"]  # 85.1±4.30(50)
    fs = load("fsbc")
    r = fs[(fs["dataset"] == "mfeat_fac") & (fs["method"] == "all_features")]
    assert all("UCI Digit" in n and "AllFea" in n for n in r["note"])
    bold = fs[fs["note"].str.contains("bold")]
    # bold cells of FSBC Tables 2-4: FSBC in all 18 rows; FSASL and FSBC_nobal (Mnist4000
    # ACC); FSASL (Mnist4000 NMI); NSSLFS (20NG NE); LRPFS and URAFS (UCI Digit NE)
    assert len(bold) == 18 + 2 + 1 + 1 + 2
