"""Dataset catalog, mirror look-up, sha256 checks, downloads (mocked) and subsampling.

Tests that read the public mirror (``../shared/datasets``) skip when it is absent
(``shared_datasets`` fixture). There is no network: every download is monkeypatched.
"""

from __future__ import annotations

import csv
import gzip
import shutil
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io

import ufs.datasets as D
from ufs.datasets import catalog as C
from ufs.datasets import mirror as M

MIRROR_NAMES = [
    "allaml", "prostate_ge", "umist", "pixraw10p", "warppie10p", "yale", "orl", "coil20",
    "jaffe", "warpar10p", "orlraws10p", "tox_171", "glioma", "colon", "leukemia", "isolet",
    "lung_discrete", "nci9", "usps", "pie", "ar", "srbct", "leuml", "mfeat_fac", "bbc",
    "palmdata25", "imm40",
]  # fmt: skip
OPENML_NAMES = ["micromass", "hars", "gina", "fabert", "dilbert"]
# the K-means UFS paper's six: Fashion-MNIST from the mirror's IDX files
KMEANS_UFS_NAMES = [*OPENML_NAMES, "fashion_mnist"]
OFFLINE_MISSING = ["lung", "20ng"]


def _manifest(root: Path) -> dict[str, dict[str, str]]:
    with open(root / "MANIFEST.tsv", newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t")}


@pytest.fixture(scope="module")
def manifest(shared_datasets):
    return _manifest(shared_datasets)


@pytest.fixture(scope="module")
def loaded(shared_datasets, tmp_path_factory):
    """Every mirror dataset loaded once through the registry, with its load time."""
    cache = tmp_path_factory.mktemp("cache")
    out = {}
    for name in MIRROR_NAMES:
        t0 = time.perf_counter()
        d = D.load_dataset(name, mirror=shared_datasets, cache=cache)
        out[name] = (d, time.perf_counter() - t0)
    assert not any(cache.iterdir()), "a mirror load must not write into the cache"
    return out


@pytest.fixture
def no_network(monkeypatch):
    """Any download attempt fails like an unreachable network; calls are recorded."""
    calls = []

    def fail(url, dest, **kw):
        calls.append(url)
        raise OSError("network is unreachable")

    monkeypatch.setattr(M, "download", fail)
    return calls


# -- catalog -------------------------------------------------------------------------
def test_every_name_is_registered_with_its_kind():
    names = set(D.available_datasets())
    assert set(MIRROR_NAMES + OPENML_NAMES + OFFLINE_MISSING) <= names
    for n in MIRROR_NAMES:
        s = D.get_dataset(n)
        assert s.source == "url" and not s.needs_network
        assert s.url.startswith("https://raw.githubusercontent.com/") and len(s.sha256) == 64
        assert s.citation and s.filename
    for n in OPENML_NAMES:
        s = D.get_dataset(n)
        assert s.source == "openml" and s.needs_network and isinstance(s.openml_id, int)
        assert "unconfirmed" in s.notes and "kmeans_ufs" in s.papers
    for n in OFFLINE_MISSING:
        assert D.get_dataset(n).needs_network
    assert set(D.datasets_needing_network()) == set(OPENML_NAMES + OFFLINE_MISSING)


def test_paper_membership_and_subsampling_rules():
    by_paper = {}
    for n in D.available_datasets():
        for p in D.get_dataset(n).papers:
            by_paper.setdefault(p, set()).add(n)
    assert by_paper["dgufs"] == {
        "allaml",
        "prostate_ge",
        "lung",
        "umist",
        "pixraw10p",
        "warppie10p",
    }
    assert by_paper["spcafs"] == {"palmdata25", "imm40", "pie", "ar", "srbct", "leuml"}
    assert by_paper["fsbc"] == {"yale", "20ng", "jaffe", "mnist4000", "orl", "mfeat_fac"}
    assert by_paper["kmeans_ufs"] == set(KMEANS_UFS_NAMES)
    assert {"bbc", "yale"} <= by_paper["golfs"]
    rules = {n: D.get_dataset(n).options.get("per_class") for n in KMEANS_UFS_NAMES}
    assert rules == {
        "micromass": None, "hars": 500, "fashion_mnist": 300, "gina": None,
        "fabert": 500, "dilbert": 700,
    }  # fmt: skip
    # Table II sample counts of the subsampled sets
    assert [D.get_dataset(n).n_samples for n in ("hars", "fashion_mnist", "fabert", "dilbert")] == [
        3000, 3000, 3500, 3500,
    ]  # fmt: skip


def test_catalog_agrees_with_manifest(manifest):
    specs = {D.get_dataset(n).filename: D.get_dataset(n) for n in MIRROR_NAMES}
    assert set(specs) == set(manifest)
    for file, row in manifest.items():
        s = specs[file]
        assert s.sha256 == row["sha256"], file
        assert row["source_repo"] in s.url and row["source_commit"] in s.url, file
        assert s.url.endswith(row["source_path"].split(":")[0]), file
        assert s.n_classes == int(row["n_classes"]), file
        if s.name != "bbc":  # BBC is raw text; the registry shape is after TF-IDF
            assert (s.n_samples, s.n_features) == (int(row["n_samples"]), int(row["n_features"]))


# -- loading the mirror ----------------------------------------------------------------
@pytest.mark.parametrize("name", MIRROR_NAMES)
def test_mirror_dataset_loads_with_manifest_shape(name, loaded, manifest):
    d, _ = loaded[name]
    spec = D.get_dataset(name)
    row = manifest[spec.filename]
    assert d.X.dtype == np.float64 and d.X.flags.c_contiguous
    assert d.y.dtype == np.int64 and set(np.unique(d.y)) == set(range(int(row["n_classes"])))
    if name == "bbc":
        assert d.X.shape == (200, 2057)
    else:
        assert d.X.shape == (int(row["n_samples"]), int(row["n_features"]))
    assert d.meta["sha256"] == row["sha256"] and d.meta["url"] == spec.url


def test_mirror_loads_are_fast(loaded):
    total = sum(t for _, t in loaded.values())
    assert total < 15.0, {n: round(t, 3) for n, (_, t) in loaded.items()}


def test_label_codings(loaded):
    colon, _ = loaded["colon"]  # stored as -1/1
    assert np.bincount(colon.y).tolist() == [40, 22]
    mfeat, _ = loaded["mfeat_fac"]  # first column 1..10, 200 rows each in order
    assert np.array_equal(mfeat.y, np.repeat(np.arange(10), 200))


def test_bbc_tfidf(loaded, shared_datasets):
    d, _ = loaded["bbc"]
    assert (d.X >= 0).all()
    np.testing.assert_allclose(np.linalg.norm(d.X, axis=1), 1.0)  # l2-normalised rows
    with gzip.open(shared_datasets / "BBC/bbc-text.csv.gz", "rt") as fh:
        cats = [r["category"] for r in csv.DictReader(fh)][:200]
    names = sorted(set(cats))
    assert d.y.tolist() == [names.index(c) for c in cats]  # first 200 articles, file order


# -- sha256 and the mirror -----------------------------------------------------------
def test_verify_sha256(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"abc")
    good = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert D.verify_sha256(f, good.upper()) == f
    with pytest.raises(ValueError, match=f"sha256 mismatch for {f}.*expected 0+, got {good}"):
        D.verify_sha256(f, "0" * 64)


@pytest.mark.parametrize("layout", ["manifest_path", "basename"])
def test_corrupted_mirror_copy_is_rejected_and_not_used(
    layout, shared_datasets, tmp_path, no_network
):
    spec = D.get_dataset("lung_discrete")
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    dest = mirror / (spec.filename if layout == "manifest_path" else Path(spec.filename).name)
    dest.parent.mkdir(parents=True)
    shutil.copyfile(shared_datasets / spec.filename, dest)
    assert D.load_dataset("lung_discrete", mirror=mirror, cache=cache).X.shape == (73, 325)

    data = bytearray(dest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dest.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256") as exc:
        D.load_dataset("lung_discrete", mirror=mirror, cache=cache)
    msg = str(exc.value)
    assert str(dest) in msg and spec.sha256 in msg and M.sha256_file(dest) in msg
    assert not cache.exists() or not any(cache.rglob("*"))  # nothing copied or downloaded
    assert no_network == []


# -- downloads (mocked) ----------------------------------------------------------------
def test_non_https_urls_are_refused(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("no connection may be attempted")

    monkeypatch.setattr(M.urllib.request, "urlopen", boom)
    for url in ("http://example.org/x.mat", "ftp://example.org/x.mat", "file:///etc/passwd"):
        with pytest.raises(ValueError, match="only https"):
            M.download(url, tmp_path / "x")
        with pytest.raises(ValueError, match="only https"):
            M.fetch_file("x", filename="x.mat", sha256="0" * 64, url=url, cache=tmp_path)


def test_network_entry_without_network_gives_clear_error(tmp_path, no_network):
    spec = D.get_dataset("lung")
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    with pytest.raises(D.DownloadError) as exc:
        D.load_dataset("lung", mirror=mirror, cache=cache)
    msg = str(exc.value)
    assert f"not in mirror {mirror}" in msg and "lung/lung.mat" in msg
    assert f"download from {spec.url} failed" in msg and "network is unreachable" in msg
    assert no_network == [spec.url]
    assert not any(p.is_file() for p in cache.rglob("*"))  # no temp file left behind
    with pytest.raises(D.DownloadError, match="no mirror directory given"):
        D.load_dataset("lung", cache=cache)


def test_manual_entry_says_where_to_put_the_file(tmp_path, no_network):
    with pytest.raises(D.DownloadError, match=r"no public download URL.*20NG\.mat"):
        D.load_dataset("20ng", mirror=tmp_path, cache=tmp_path)
    assert no_network == []


def test_manual_copy_is_used_unverified_with_shape_check(tmp_path):
    f = tmp_path / "20NG" / "20NG.mat"
    f.parent.mkdir()
    rng = np.random.default_rng(0)
    gnd = np.repeat(np.arange(4), 3970 // 4 + 1)[:3970]
    scipy.io.savemat(f, {"fea": rng.random((3970, 1000)), "gnd": gnd})
    with pytest.warns(UserWarning, match="no sha256 is pinned"):
        d = D.load_dataset("20ng", mirror=tmp_path)
    assert d.X.shape == (3970, 1000) and d.n_classes == 4
    scipy.io.savemat(f, {"fea": rng.random((3970, 990)), "gnd": gnd})
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="expected 3970 × 1000"):
        D.load_dataset("20ng", mirror=tmp_path)


def test_download_is_verified_cached_and_atomic(shared_datasets, tmp_path, monkeypatch):
    spec = D.get_dataset("colon")
    payload = {"bytes": (shared_datasets / spec.filename).read_bytes()}
    calls = []

    def fake(url, dest, **kw):
        calls.append(url)
        Path(dest).write_bytes(payload["bytes"])
        return Path(dest)

    monkeypatch.setattr(M, "download", fake)
    cache = tmp_path / "cache"
    bad = bytearray(payload["bytes"])
    bad[100] ^= 1
    payload["bytes"] = bytes(bad)
    with pytest.raises(ValueError, match="sha256 mismatch"):
        D.load_dataset("colon", mirror=tmp_path / "empty", cache=cache)
    assert [p for p in cache.rglob("*") if p.is_file()] == []  # temp file removed

    payload["bytes"] = (shared_datasets / spec.filename).read_bytes()
    d = D.load_dataset("colon", mirror=tmp_path / "empty", cache=cache)
    assert d.X.shape == (62, 2000)
    assert [p.relative_to(cache) for p in cache.rglob("*") if p.is_file()] == [
        Path("colon/colon.mat")
    ]
    D.load_dataset("colon", cache=cache)  # cache hit: no second download
    assert calls == [spec.url, spec.url]  # the bad and the good download, then none


def test_cached_download_corrupted_later_is_set_aside_and_fetched_again(
    shared_datasets, tmp_path, monkeypatch
):
    spec = D.get_dataset("colon")
    good = (shared_datasets / spec.filename).read_bytes()
    calls = []

    def fake(url, dest, **kw):
        calls.append(url)
        Path(dest).write_bytes(good)
        return Path(dest)

    monkeypatch.setattr(M, "download", fake)
    cache = tmp_path / "cache"
    D.load_dataset("colon", cache=cache)
    cached = cache / "colon" / "colon.mat"
    flipped = bytearray(cached.read_bytes())
    flipped[100] ^= 1
    cached.write_bytes(bytes(flipped))  # corrupted after the download
    with pytest.warns(UserWarning, match="failed its check"):
        d = D.load_dataset("colon", cache=cache)
    assert d.X.shape == (62, 2000) and len(calls) == 2  # downloaded again
    assert cached.read_bytes() == good
    assert (cache / "colon" / "colon.mat.corrupt").read_bytes() == bytes(flipped)

    # offline: the corrupted copy is still set aside and the error says why
    cached.write_bytes(bytes(flipped))

    def offline(url, dest, **kw):
        raise OSError("network unreachable")

    monkeypatch.setattr(M, "download", offline)
    with pytest.warns(UserWarning), pytest.raises(M.DownloadError, match="failed its check"):
        D.load_dataset("colon", cache=cache)
    assert not cached.exists()


def test_download_of_zip_member_and_plain_text(shared_datasets, tmp_path, monkeypatch):
    def fake(url, dest, **kw):
        if url.endswith(".zip"):
            with (
                zipfile.ZipFile(dest, "w") as zf,
                gzip.open(shared_datasets / "BBC/bbc-text.csv.gz") as src,
            ):
                zf.writestr("bbc-text.csv", src.read())
        else:  # mfeat-fac.txt: the uncompressed source text
            with gzip.open(shared_datasets / "mfeat-fac/mfeat-fac.txt.gz") as src:
                Path(dest).write_bytes(src.read())
        return Path(dest)

    monkeypatch.setattr(M, "download", fake)
    cache = tmp_path / "cache"
    assert D.load_dataset("bbc", cache=cache).X.shape == (200, 2057)
    assert (cache / "bbc" / "bbc-text.csv").is_file()
    d = D.load_dataset("mfeat_fac", cache=cache)
    assert d.X.shape == (2000, 216) and (cache / "mfeat_fac" / "mfeat-fac.txt").is_file()
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == [
        "bbc-text.csv",
        "mfeat-fac.txt",
    ]


# -- OpenML (mocked) -------------------------------------------------------------------
def test_openml_loader_subsamples_first_n_per_class(tmp_path, monkeypatch):
    import sklearn.datasets
    from sklearn.utils import Bunch

    n, p = D.get_dataset("hars").raw_shape
    y = np.array([str(c) for c in np.random.default_rng(1).integers(1, 7, size=n)], dtype=object)
    X = np.zeros((n, p), dtype=np.float32)
    X[:, 0] = np.arange(n)
    seen = {}

    def fake_fetch(**kw):
        seen.update(kw)
        return Bunch(data=X, target=y)

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch)
    d = D.load_dataset("hars", cache=tmp_path)
    assert seen["data_id"] == 1478 and seen["as_frame"] is False
    assert Path(seen["data_home"]).is_relative_to(tmp_path)
    assert d.X.shape == (3000, 561) and np.bincount(d.y).tolist() == [500] * 6
    rows = d.X[:, 0].astype(int)
    assert np.all(np.diff(rows) > 0)  # original order kept
    for c in np.unique(y):
        assert set(rows[y[rows] == c]) == set(np.flatnonzero(y == c)[:500])

    X2 = X[:, :100]
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", lambda **kw: Bunch(data=X2, target=y))
    with pytest.raises(ValueError, match="expected 10299 × 561.*unconfirmed"):
        D.load_dataset("hars", cache=tmp_path)


def test_openml_without_network_gives_clear_error(tmp_path, monkeypatch):
    import sklearn.datasets

    def fail(**kw):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fail)
    with pytest.raises(D.DownloadError, match=r"OpenML data_id=41163 .*needs network"):
        D.load_dataset("dilbert", cache=tmp_path)


# -- first N per class -----------------------------------------------------------------
def test_first_n_per_class_matches_brute_force():
    rng = np.random.default_rng(0)
    for labels in (rng.integers(0, 4, size=60), np.array(list("bacabbcaacbbca"))):
        for n in (1, 2, 3):
            seen, expect = {}, []
            for i, c in enumerate(labels):
                seen[c] = seen.get(c, 0) + 1
                if seen[c] <= n:
                    expect.append(i)
            assert D.first_n_per_class(labels, n).tolist() == expect


def test_first_n_per_class_short_class():
    y = np.array([0, 1, 0, 1, 0, 2])
    with pytest.raises(ValueError, match=r"first 2 per class impossible.*'2': 1"):
        D.first_n_per_class(y, 2)
    assert D.first_n_per_class(y, 2, strict=False).tolist() == [0, 1, 2, 3, 5]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            D.first_n_per_class(y, bad)


# -- .mat reading ----------------------------------------------------------------------
@pytest.mark.parametrize("pair", [("X", "Y"), ("fea", "gnd"), ("M", "L")])
def test_read_mat_variable_pairs_and_orientation(pair, tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    y = np.array([[1], [2], [1], [2]])
    f = tmp_path / "a.mat"
    scipy.io.savemat(f, {pair[0]: X, pair[1]: y})
    Xr, yr = M.read_mat(f)
    assert np.array_equal(Xr, X) and yr.tolist() == [1, 2, 1, 2]
    scipy.io.savemat(f, {pair[0]: X.T, pair[1]: y})  # features × samples is transposed
    assert np.array_equal(M.read_mat(f)[0], X)


def test_read_mat_errors(tmp_path):
    f = tmp_path / "a.mat"
    scipy.io.savemat(f, {"data": np.ones((3, 2)), "labels": np.ones(3)})
    with pytest.raises(ValueError, match=r"none of the variable pairs.*\['data', 'labels'\]"):
        M.read_mat(f)
    h5 = tmp_path / "v73.mat"
    h5.write_bytes(
        b"MATLAB 7.3 MAT-file, Platform: GLNXA64".ljust(512, b" ") + b"\x89HDF\r\n\x1a\n"
    )
    with pytest.raises(ValueError, match=r"v7\.3 \(HDF5\)"):
        M.read_mat(h5)


def test_datasets_needing_network_for_a_given_mirror(shared_datasets, tmp_path):
    assert set(D.datasets_needing_network(shared_datasets)) == set(OPENML_NAMES + OFFLINE_MISSING)
    empty = set(D.datasets_needing_network(tmp_path))
    assert set(MIRROR_NAMES) <= empty and not {"digits", "golfs_sim1"} & empty


def test_loaders_never_unpickle():
    for mod in (M, C):
        src = Path(mod.__file__).read_text()
        assert "allow_pickle=True" not in src and "pickle" not in src.replace("unpickle", "")
