"""The data sets of the mirror's ``PMLB/`` and ``Extended/`` folders: their readers on small
hand-made files (plain and gzip-compressed, and the R data reader), their registry entries,
their families, the docs page that lists every data set, and — with the mirror — each one
loaded with the shape its MANIFEST gives.

Tests that read the mirror skip when it is absent (the ``shared_datasets`` fixture); the
large sets (Dorothea's 640 MB dense matrix and the other files over 2 MB) are ``slow``.
There is no network: a download is a monkeypatched copy of the mirror's bytes.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import lzma
import re
import struct
from pathlib import Path

import numpy as np
import pytest
import scipy.io

import ufs.datasets as D
from ufs.datasets import mirror as M
from ufs.datasets import rdata, registry
from ufs.datasets.families import REGISTERED_FAMILIES, family_of
from ufs.datasets.readers import (
    read_csv_label_last,
    read_gene_table,
    read_mat_label_last,
    read_pmlb_tsv,
    read_rda_frame,
    read_ts,
)

REPO = Path(__file__).resolve().parents[1]

#: the mirror folders' sets: registered name → name in the folder's MANIFEST.tsv
PMLB = {
    f"pmlb_{n.lower()}": f"pmlb_{n}"
    for n in (
        "ionosphere", "sonar", "spectf", "spambase", "satimage", "texture", "waveform_40",
        "tokyo1", "movement_libras", "analcatdata_authorship", "clean1",
        "Hill_Valley_without_noise", "dermatology", "mfeat_pixel", "dna", "kr_vs_kp",
        "backache", "flags",
    )
}  # fmt: skip
EXTENDED = {
    n.lower(): n
    for n in (
        "ACSF1", "Arcene", "Articles1442", "Bhattacharjee2001_lung", "BinaryAlphadigits",
        "Cardiotocography", "Chen2002_liver", "Chowdary2006", "CNAE9", "DHFR_ECFP4",
        "Dorothea", "ExtYaleB32", "Fontaine_ECFP4", "Gordon2002_lung", "ImageSegmentation",
        "Lapointe2004_prostate", "M1_ECFP4", "Madelon", "Meats_NIR", "MNIST4000", "MSRA25",
        "PCMAC", "Ramaswamy2001_GCM", "Semeion", "Tomlins2006_prostate", "Tumors11",
        "YeastGalactose", "Yeoh2002_ALL",
    )
}  # fmt: skip
NEW = {**PMLB, **EXTENDED}
#: identifier columns dropped from a PMLB file: the registry's p is the MANIFEST's minus these
DROPPED = {"pmlb_clean1": 2, "pmlb_backache": 1}
#: files over 2 MB or read into large dense matrices
SLOW = {"dorothea", "extyaleb32", "tumors11", "arcene", "mnist4000"}


def _gz(path: Path, text: str) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _both(tmp_path: Path, name: str, text: str) -> list[Path]:
    """The same text as a plain file and gzip-compressed (``<name>.gz``)."""
    plain = tmp_path / name
    plain.write_text(text, encoding="utf-8")
    return [plain, _gz(tmp_path / f"{name}.gz", text)]


# -- PMLB .tsv ------------------------------------------------------------------------------
def test_pmlb_tsv_label_column_anywhere_and_identifiers_dropped(tmp_path):
    text = "id\tf1\ttarget\tf2\n1\t0.5\t2\t-1\n2\t1.5\t0\t3\n3\t2.5\t2\t4e-1\n"
    for path in _both(tmp_path, "a.tsv", text):
        X, y = read_pmlb_tsv(path, drop=("id",))
        np.testing.assert_array_equal(X, [[0.5, -1.0], [1.5, 3.0], [2.5, 0.4]])
        assert y.tolist() == [2, 0, 2]
        assert read_pmlb_tsv(path)[0].shape == (3, 3)  # the id kept when not dropped


def test_pmlb_tsv_wrong_files_are_named(tmp_path):
    f = tmp_path / "b.tsv"
    f.write_text("f1\tclass\n1\t0\n")
    with pytest.raises(ValueError, match=r"b\.tsv: no column 'target'"):
        read_pmlb_tsv(f)
    f.write_text("f1\ttarget\n1\t0\n")
    with pytest.raises(ValueError, match="no column 'id'"):
        read_pmlb_tsv(f, drop=("id",))
    f.write_text("f1\ttarget\nred\t0\nblue\t1\n")
    with pytest.raises(ValueError, match="not a number: 'red'"):
        read_pmlb_tsv(f)
    bad = tmp_path / "c.tsv.gz"
    bad.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(ValueError, match="not a PMLB tab-separated file"):
        read_pmlb_tsv(bad)


# -- de Souto genes × samples ------------------------------------------------------------------
def test_gene_table_is_transposed_to_samples_by_genes(tmp_path):
    text = "GENES\tAD\tAD\tNL\ng1\t1.0\t2.0\t3.0\ng2\t-1\t0.5\t7\n"
    for path in _both(tmp_path, "x_database.txt", text):
        X, y = read_gene_table(path)
        np.testing.assert_array_equal(X, [[1.0, -1.0], [2.0, 0.5], [3.0, 7.0]])
        assert y.tolist() == ["AD", "AD", "NL"] and X.flags.c_contiguous


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("ID\tAD\tNL\ng1\t1\t2\n", "first field is 'ID', expected 'GENES'"),
        ("GENES\tAD\tNL\ng1\t1\n", "line 2 has 2 fields, the header 3"),
        ("GENES\tAD\tNL\ng1\t1\tNA?\n", "not a number: 'NA\\?'"),
        ("GENES\tAD\tNL\n", "needs ≥ 1 gene"),
        ("", "the first field is 'nothing'"),
    ],
)
def test_gene_table_wrong_files_are_named(tmp_path, text, match):
    f = tmp_path / "y_database.txt"
    f.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_gene_table(f)


# -- UnifiedView CSV -----------------------------------------------------------------------------
def test_csv_label_last(tmp_path):
    for path in _both(tmp_path, "d.data", "0,1,0.5,1\n1,0,-0.25,2\n1,1,3,1\n"):
        X, y = read_csv_label_last(path)
        assert X.shape == (3, 3) and y.tolist() == [1.0, 2.0, 1.0]


def test_csv_label_last_wrong_files_are_named(tmp_path):
    f = tmp_path / "e.data"
    f.write_text("a,b,class\n0,1,1\n1,0,2\n")
    with pytest.raises(ValueError, match=r"e\.data: the table holds a field that is not a number"):
        read_csv_label_last(f)
    f.write_text("1\n2\n")
    with pytest.raises(ValueError, match="1 column"):
        read_csv_label_last(f)
    f.write_text("0,1,1\n1,2\n")
    with pytest.raises(ValueError, match="ragged rows"):
        read_csv_label_last(f)


# -- a .mat matrix whose last column is the label ------------------------------------------------
def test_mat_label_last(tmp_path):
    f = tmp_path / "arc.mat"
    M_ = np.c_[np.arange(12.0).reshape(4, 3), [1, 2, 2, 1]]
    scipy.io.savemat(f, {"arcene": M_})
    X, y = read_mat_label_last(f, variable="arcene")
    np.testing.assert_array_equal(X, M_[:, :3])
    assert y.tolist() == [1, 2, 2, 1]
    with pytest.raises(ValueError, match=r"no variable 'X'; the file holds \['arcene'\]"):
        read_mat_label_last(f, variable="X")
    scipy.io.savemat(f, {"arcene": np.ones((4, 1))})
    with pytest.raises(ValueError, match="expected samples × \\(features \\+ label\\)"):
        read_mat_label_last(f, variable="arcene")
    f.write_bytes(b"not a mat file at all" * 10)
    with pytest.raises(ValueError, match="not a readable .mat file"):
        read_mat_label_last(f, variable="arcene")


# -- sktime .ts ----------------------------------------------------------------------------------
TS_HEAD = "# a comment\n@problemName toy\n@univariate true\n@classLabel true a b\n@data\n"


def test_ts_files_are_concatenated_in_order_plain_or_gz(tmp_path):
    train = tmp_path / "T_TRAIN.ts"
    train.write_text(TS_HEAD + "1,2,3:a\n4,5,6:b\n")
    test = _gz(tmp_path / "T_TEST.ts.gz", TS_HEAD + "\n7,8,9.5:b\n")
    X, y = read_ts([train, test])
    np.testing.assert_array_equal(X, [[1, 2, 3], [4, 5, 6], [7, 8, 9.5]])
    assert y.tolist() == ["a", "b", "b"]
    assert read_ts(train)[0].shape == (2, 3)


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("@problemName x\n1,2:a\n", "line 2 is neither a comment"),
        ("@problemName x\n", "no @data line"),
        ("@data\n", "no series after @data"),
        ("@data\n1,2:3,4:a\n", "2 ':' separators; only univariate"),
        ("@data\n1,2,3\n", "0 ':' separators"),
        ("@data\n1,2:a\n1,2,3:b\n", r"series of lengths \[2, 3\]"),
        ("@data\n1,?:a\n", "missing values"),
        ("@data\n1,x:a\n", "not a number: 'x'"),
    ],
)
def test_ts_wrong_files_are_named(tmp_path, body, match):
    f = tmp_path / "bad.ts"
    f.write_text(body)
    with pytest.raises(ValueError, match=match):
        read_ts(f)


def test_ts_files_of_different_lengths_are_refused(tmp_path):
    a, b = tmp_path / "a.ts", tmp_path / "b.ts"
    a.write_text("@data\n1,2:a\n")
    b.write_text("@data\n1,2,3:a\n")
    with pytest.raises(ValueError, match=r"different lengths \[2, 3\]"):
        read_ts([a, b])


# -- R data files --------------------------------------------------------------------------------
def _i(*v: int) -> bytes:
    return struct.pack(f">{len(v)}i", *v)


_ATTR, _TAG, _OBJ = 1 << 9, 1 << 10, 1 << 8


class _RWriter:
    """A minimal XDR R serializer (R Internals §1.8) for the reader's tests. Symbols are
    written in full each time (R refers back to one written before, ``REFSXP``: a test
    writes such a reference by hand)."""

    @staticmethod
    def chars(s: str | None) -> bytes:
        if s is None:
            return _i(9, -1)
        raw = s.encode()
        return _i(9 | (8 << 12), len(raw)) + raw  # UTF-8 flag

    def symbol(self, name: str) -> bytes:
        return _i(1) + self.chars(name)

    def pairlist(self, items: list[tuple[str, bytes]]) -> bytes:
        out = b"".join(_i(2 | _TAG) + self.symbol(t) + v for t, v in items)
        return out + _i(254)

    def strings(self, values: list[str | None]) -> bytes:
        return _i(16, len(values)) + b"".join(self.chars(v) for v in values)

    def reals(self, values, attrs: bytes = b"") -> bytes:
        v = np.asarray(values, dtype=">f8")
        return _i(14 | (_ATTR if attrs else 0), v.size) + v.tobytes() + attrs

    def ints(self, values, attrs: bytes = b"", obj: bool = False) -> bytes:
        v = np.asarray(values, dtype=">i4")
        flags = 13 | (_ATTR if attrs else 0) | (_OBJ if obj else 0)
        return _i(flags, v.size) + v.tobytes() + attrs

    def factor(self, codes, levels) -> bytes:
        attrs = self.pairlist(
            [("levels", self.strings(levels)), ("class", self.strings(["factor"]))]
        )
        return self.ints(codes, attrs, obj=True)

    def frame(self, columns: dict[str, bytes], n: int, row_names: bytes | None = None) -> bytes:
        attrs = [
            ("names", self.strings(list(columns))),
            ("row.names", row_names if row_names is not None else self.ints([-(2**31), -n])),
            ("class", self.strings(["data.frame"])),
            (".internal.selfref", _i(22, 254, 254)),  # data.table's null external pointer
        ]
        return (
            _i(19 | _ATTR | _OBJ, len(columns)) + b"".join(columns.values()) + self.pairlist(attrs)
        )


def _rda(objects: dict[str, bytes], writer: _RWriter, version: int = 2) -> bytes:
    head = f"RDX{version}\nX\n".encode() + _i(version, 0x040300, 0x020300)
    if version == 3:
        head += _i(5) + b"UTF-8"
    return head + writer.pairlist(list(objects.items()))


def _compact_intseq(writer: _RWriter, n: int) -> bytes:
    """R ≥ 3.5's ALTREP 1..n, as ``row.names`` of a version-3 file."""
    info = (  # an untagged pair list: class, package, type
        _i(2) + writer.symbol("compact_intseq") + _i(2) + writer.symbol("base")
        + _i(2) + writer.ints([13]) + _i(254)
    )  # fmt: skip
    return _i(238) + info + writer.reals([n, 1, 1]) + _i(254)


@pytest.mark.parametrize(
    ("version", "compress"), [(2, "gzip"), (2, "xz"), (3, "none"), (3, "gzip")]
)
def test_rda_data_frame_of_numbers_and_a_factor(tmp_path, version, compress):
    w = _RWriter()
    cols = {
        "X400": w.reals([0.5, 1.5, 2.5]),
        "X402": w.reals([1.0, np.nan, 3.0]),
        "count": w.ints([1, 2, 3]),
        "class": w.factor([2, 1, 2], ["Beef", "Pork"]),
    }
    rows = _compact_intseq(w, 3) if version == 3 else None
    raw = _rda({"meats": w.frame(cols, 3, rows), "note": w.strings(["a", None])}, w, version)
    raw = {"gzip": gzip.compress, "xz": lzma.compress, "none": bytes}[compress](raw)
    f = tmp_path / "m.rda"
    f.write_bytes(raw)
    objects = rdata.read_rdata(f)
    assert sorted(objects) == ["meats", "note"]
    assert objects["note"].values == ["a", None]
    frame = objects["meats"]
    assert list(frame) == ["X400", "X402", "count", "class"]
    assert frame["class"].labels().tolist() == ["Pork", "Beef", "Pork"]
    X, y = read_rda_frame(f, frame="meats", label="class")
    np.testing.assert_array_equal(X, [[0.5, 1.0, 1], [1.5, np.nan, 2], [2.5, 3.0, 3]])
    assert y.tolist() == ["Pork", "Beef", "Pork"]


def test_rda_wrong_files_are_named(tmp_path):
    w = _RWriter()
    good = {"meats": w.frame({"a": w.reals([1.0]), "class": w.factor([1], ["x"])}, 1)}
    f = tmp_path / "m.rda"
    f.write_bytes(gzip.compress(_rda(good, w)))
    with pytest.raises(ValueError, match=r"no object 'other'; the file holds \['meats'\]"):
        read_rda_frame(f, frame="other", label="class")
    with pytest.raises(ValueError, match="no factor column 'a'"):
        read_rda_frame(f, frame="meats", label="a")
    w = _RWriter()
    f.write_bytes(_rda({"v": w.reals([1.0, 2.0])}, w))
    with pytest.raises(ValueError, match="'v' is not a data frame"):
        read_rda_frame(f, frame="v", label="class")
    w = _RWriter()
    text = {"meats": w.frame({"s": w.strings(["u"]), "class": w.factor([1], ["x"])}, 1)}
    f.write_bytes(_rda(text, w))
    with pytest.raises(ValueError, match=r"columns \['s'\] of 'meats' are not numeric"):
        read_rda_frame(f, frame="meats", label="class")
    w = _RWriter()
    f.write_bytes(_rda({"e": _i(4) + b"\0" * 16}, w))  # an environment
    with pytest.raises(ValueError, match="holds an environment, which this reader does not read"):
        rdata.read_rdata(f)
    w = _RWriter()
    f.write_bytes(_rda({"v": w.reals([1.0, 2.0])}, w)[:-6])
    with pytest.raises(ValueError, match="truncated R serialization"):
        rdata.read_rdata(f)
    f.write_bytes(b"RDA2\nA\n2\n")
    with pytest.raises(ValueError, match="in ASCII form; only the XDR form"):
        rdata.read_rdata(f)
    f.write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(ValueError, match="not an R data file"):
        rdata.read_rdata(f)
    f.write_bytes(b"\xfd7zXZ\x00 damaged")
    with pytest.raises(ValueError, match="damaged compressed R data file"):
        rdata.read_rdata(f)
    # a reference to the symbol read first (the tag "s"): R's REFSXP, index 1 in its flags
    f.write_bytes(b"RDX2\nX\n" + _i(2, 0, 0) + _i(2 | _TAG) + w.symbol("s") + _i(255 | 1 << 8, 254))
    assert rdata.read_rdata(f) == {"s": "s"}
    f.write_bytes(b"RDX2\nX\n" + _i(2, 0, 0) + _i(2 | _TAG) + w.symbol("s") + _i(255 | 7 << 8, 254))
    with pytest.raises(ValueError, match="reference 7 to an unknown object"):
        rdata.read_rdata(f)
    with pytest.raises(ValueError, match=r"factor codes outside 1\.\.2"):
        rdata.RFactor(np.array([1, -(2**31)]), ["a", "b"]).labels()


# -- registry entries ------------------------------------------------------------------------------
def test_every_new_set_is_registered_with_its_source_and_citation():
    names = set(D.available_datasets())
    assert set(NEW) <= names
    for name in NEW:
        s = D.get_dataset(name)
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        assert (
            s.source == "url"
            and not s.needs_network
            and s.papers == (("fsbc",) if name == "mnist4000" else ())
        ), name
        assert re.fullmatch(r"[0-9a-f]{64}", s.sha256) and s.citation and s.notes, name
        assert s.raw_shape == (s.n_samples, s.n_features), name
        folder = "PMLB/" if name in PMLB else "Extended/"
        assert s.filename.startswith(folder), name
        host = "media.githubusercontent.com/media" if name in PMLB else "raw.githubusercontent.com"
        assert re.match(rf"https://{host}/[\w.-]+/[\w.-]+/[0-9a-f]{{40}}/", s.url), (name, s.url)
        # the study and the repository the copy comes from (PMLB: its paper)
        repo = "/".join(s.url.split("/")[4:6] if name in PMLB else s.url.split("/")[3:5])
        assert ("PMLB v1.0" if name in PMLB else repo) in s.citation, (name, repo)
        assert len(s.citation.split(";")) >= 2, name
        # a gzipped mirror copy pins the download's own hash
        gz = s.filename.endswith(".gz")
        assert bool(s.url_sha256) == (gz and name not in PMLB), name
        assert s.loader.__name__ in (f"load_{name}", "_ts_loader"), name


def test_mnist4000_is_the_public_copy_with_the_draw_caveat():
    s = D.get_dataset("mnist4000")
    assert s.source == "url" and s.filename == "Extended/MNIST4000/mnist.mat"
    assert "ma-xu/L21FS" in s.url and "ma-xu/L21FS" in s.citation
    assert "not be the paper's draw" in s.notes and "which ones not stated" in s.citation


def test_families_merge_the_overlaps_and_count_at_least_40():
    assert family_of("pmlb_mfeat_pixel") == family_of("mfeat_fac") == "mfeat_fac"
    assert family_of("bhattacharjee2001_lung") == family_of("lung") == "lung"
    assert family_of("pcmac") == family_of("20ng")
    assert family_of("mnist4000") == "mnist4000" and family_of("tumors11") == "tumors11"
    # de Souto's eight studies and the three ECFP_4 compound sets are one family each
    de_souto = [
        D.get_dataset(n) for n in EXTENDED if D.get_dataset(n).url.endswith("_database.txt")
    ]
    assert len(de_souto) == 8 and len({family_of(s.name) for s in de_souto}) == 8
    assert len({family_of(n) for n in EXTENDED if n.endswith("ecfp4")}) == 3
    assert len({family_of(n) for n in ("madelon", "arcene", "dorothea")}) == 3
    assert len({family_of(n) for n in D.available_datasets()}) >= 40
    assert set(REGISTERED_FAMILIES) <= set(D.available_datasets())


def test_a_wrong_file_in_the_mirror_is_a_clear_error(tmp_path, no_network, monkeypatch):
    """A file of the right name but not the right content: the sha256 check refuses it; one
    read unverified (no hash pinned) is refused by the shape check, naming both shapes."""
    spec = D.get_dataset("chen2002_liver")
    f = tmp_path / spec.filename
    f.parent.mkdir(parents=True)
    f.write_text("GENES\tHCC\tLiver\ng1\t1\t2\n")
    with pytest.raises(ValueError, match="sha256 mismatch"):
        D.load_dataset("chen2002_liver", mirror=tmp_path, cache=tmp_path / "cache")
    monkeypatch.setitem(registry._DATASETS, spec.name, dataclasses.replace(spec, sha256=""))
    with (
        pytest.warns(UserWarning, match="no sha256 is pinned"),
        pytest.raises(ValueError, match=r"holds a 2 × 1 matrix; expected 179 × 85"),
    ):
        D.load_dataset("chen2002_liver", mirror=tmp_path, cache=tmp_path / "cache")
    assert no_network == []


@pytest.fixture
def no_network(monkeypatch):
    calls: list[str] = []

    def fail(url, dest, **kw):
        calls.append(url)
        raise OSError("network is unreachable")

    monkeypatch.setattr(M, "download", fail)
    return calls


def test_the_docs_page_lists_every_registered_data_set():
    page = (REPO / "docs" / "datasets.md").read_text()
    table = [ln.strip().strip("|").split("|") for ln in page.splitlines() if ln.startswith("| `")]
    rows = {cells[0].strip("` "): [c.strip() for c in cells] for cells in table}
    assert set(rows) == set(D.available_datasets())
    for name, cells in rows.items():
        s = D.get_dataset(name)
        assert cells[1] == f"{s.n_samples} × {s.n_features}, {s.n_classes}", name
        assert cells[3] == f"`{family_of(name)}`", name
    assert f"{len(rows)} registered data sets" in page
    assert f"{len({family_of(n) for n in rows})} families" in page


# -- the mirror ------------------------------------------------------------------------------------
def _manifests(root: Path) -> dict[str, dict[str, str]]:
    out = {}
    for man in (root / "PMLB" / "MANIFEST.tsv", root / "Extended" / "MANIFEST.tsv"):
        with open(man, newline="", encoding="utf-8") as fh:
            out.update({r["name"]: r for r in csv.DictReader(fh, delimiter="\t")})
    return out


def test_the_entries_are_the_manifests(shared_datasets):
    rows = _manifests(shared_datasets)
    assert set(rows) == set(NEW.values())
    for name, row_name in NEW.items():
        s, row = D.get_dataset(name), rows[row_name]
        files, shas = row["file"].split(";"), row["sha256"].split(";")
        paths = row.get("source_path") or row["path"]
        commit = row.get("source_commit") or row["commit"]
        folder = "" if name in PMLB else "Extended/"
        assert s.filename == folder + files[0] and s.sha256 == shas[0], name
        assert row["source_repo"] in s.url and commit in s.url, name
        assert s.url.endswith(paths.split(";")[0]), name
        originals = re.findall(r"sha256=([0-9a-f]{64})", row["notes"])
        assert s.url_sha256 == (originals[0] if originals else ""), name
        assert (s.n_samples, s.n_features + DROPPED.get(name, 0), s.n_classes) == (
            int(row["n_samples"]),
            int(row["n_features"]),
            int(row["n_classes"]),
        ), name
    acsf1 = D.get_dataset("acsf1").options["files"]
    assert [f[1] for f in acsf1] == rows["ACSF1"]["sha256"].split(";")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(NEW)]
)
def test_each_set_loads_from_the_mirror_with_its_shape(name, shared_datasets, tmp_path):
    cache = tmp_path / "cache"
    d = D.load_dataset(name, mirror=shared_datasets, cache=cache)
    s = D.get_dataset(name)
    assert d.X.shape == (s.n_samples, s.n_features) and d.X.dtype == np.float64
    assert set(np.unique(d.y)) == set(range(s.n_classes))
    assert np.isfinite(d.X).all()
    assert not cache.exists() or not any(cache.rglob("*"))  # read in place


def test_label_codings_and_contents(shared_datasets):
    def load(name):
        return D.load_dataset(name, mirror=shared_datasets)

    meats = load("meats_nir")  # factor levels in sorted order: Beef Chicken Lamb Pork Turkey
    assert np.bincount(meats.y).tolist() == [32, 55, 34, 55, 55]
    assert meats.X.min() == pytest.approx(0.751565) and meats.X.max() == pytest.approx(1.675878)
    assert np.bincount(load("acsf1").y).tolist() == [20] * 10
    yeoh = load("yeoh2002_all")  # BCR-ABL E2A-PBX1 Hyperdip>50 MLL T-ALL TEL-AML
    assert np.bincount(yeoh.y).tolist() == [15, 27, 64, 20, 43, 79]
    assert np.bincount(load("pmlb_flags").y).tolist() == [40, 60, 36, 27, 15]
    clean1 = load("pmlb_clean1")
    assert clean1.X.shape[1] == 166  # the molecule and conformation names left out


def test_a_download_is_the_uncompressed_original(shared_datasets, tmp_path, monkeypatch):
    """Without the mirror, the public file is downloaded: for a set the mirror holds gzipped
    (a gene table, ACS-F1's two files) that is the plain text, checked against the
    original's sha256 and read the same."""
    served = []

    def download(url, dest, **kw):
        served.append(url)
        name = url.rsplit("/", 1)[1]
        gz = next(shared_datasets.glob(f"Extended/*/{name}.gz"))
        Path(dest).write_bytes(gzip.decompress(gz.read_bytes()))
        return Path(dest)

    monkeypatch.setattr(M, "download", download)
    empty, cache = tmp_path / "empty", tmp_path / "cache"
    empty.mkdir()
    for name in ("gordon2002_lung", "acsf1"):
        here = D.load_dataset(name, mirror=shared_datasets)
        fetched = D.load_dataset(name, mirror=empty, cache=cache)
        np.testing.assert_array_equal(here.X, fetched.X)
        np.testing.assert_array_equal(here.y, fetched.y)
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == [
        "ACSF1_TEST.ts",
        "ACSF1_TRAIN.ts",
        "gordon-2002_database.txt",
    ]
    assert len(served) == 3
    again = D.load_dataset("acsf1", mirror=empty, cache=cache)  # from the cache
    assert again.X.shape == (200, 1460) and len(served) == 3
