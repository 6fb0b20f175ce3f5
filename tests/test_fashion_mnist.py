"""Fashion-MNIST offline: the IDX reader, the mirror files, the paper's
first-300-per-class subset, and a damaged copy refused."""

from __future__ import annotations

import gzip
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from ufs.datasets import first_n_per_class, get_dataset, load_dataset
from ufs.datasets.idx import read_idx

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO.parent / "shared" / "datasets"
FMNIST = MIRROR / "FashionMNIST"
needs_mirror = pytest.mark.skipif(
    not (FMNIST / "train-labels-idx1-ubyte.gz").is_file(),
    reason="../shared/datasets/FashionMNIST (the local mirror) is absent",
)


def _idx_bytes(a: np.ndarray, type_byte: int = 0x08) -> bytes:
    head = bytes([0, 0, type_byte, a.ndim]) + b"".join(struct.pack(">I", d) for d in a.shape)
    return head + a.astype(a.dtype.newbyteorder(">")).tobytes()


def test_read_idx_round_trips_gzip_and_plain(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "a.idx").write_bytes(_idx_bytes(images))
    with gzip.open(tmp_path / "a.idx.gz", "wb") as fh:
        fh.write(_idx_bytes(images))
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx"), images)
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx.gz"), images)
    floats = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    (tmp_path / "f.idx").write_bytes(_idx_bytes(floats, 0x0D))
    out = read_idx(tmp_path / "f.idx")
    assert out.dtype == np.float32 and out.dtype.isnative
    np.testing.assert_array_equal(out, floats)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x01\x00\x08\x01\x00\x00\x00\x02ab", "not an IDX file"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x02ab", "unknown IDX type byte 0x07"),
        (b"\x00\x00\x08\x02\x00\x00\x00\x02", "header of 2 dimensions is truncated"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x03ab", "need 11 bytes; the file has 10"),
        (b"", "not an IDX file"),
    ],
)
def test_read_idx_refuses_what_is_not_idx(tmp_path, content, message):
    path = tmp_path / "bad.idx"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as err:
        read_idx(path)
    assert "bad.idx" in str(err.value)


def test_a_damaged_gzip_stream_is_named(tmp_path):
    path = tmp_path / "x.idx.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(_idx_bytes(np.zeros((5, 5), dtype=np.uint8)))
    path.write_bytes(path.read_bytes()[:-12])  # the gzip trailer and some data cut off
    with pytest.raises(ValueError, match="x.idx.gz: not a readable IDX file"):
        read_idx(path)


def test_the_registry_entry_is_the_papers_subset():
    spec = get_dataset("fashion_mnist")
    assert (spec.n_samples, spec.n_features, spec.n_classes) == (3000, 784, 10)
    assert spec.options["per_class"] == 300 and spec.raw_shape == (70000, 784)
    assert not spec.needs_network and spec.source == "url"
    names = [f[0] for f in spec.options["files"]]
    assert names == [
        "FashionMNIST/train-images-idx3-ubyte.gz",
        "FashionMNIST/train-labels-idx1-ubyte.gz",
        "FashionMNIST/t10k-images-idx3-ubyte.gz",
        "FashionMNIST/t10k-labels-idx1-ubyte.gz",
    ]


@needs_mirror
def test_the_mirror_files_match_the_manifest_and_the_entry():
    rows = [ln.split("\t") for ln in (FMNIST / "MANIFEST.tsv").read_text().splitlines()[1:]]
    manifest = {r[1]: r[2] for r in rows if len(r) > 2}
    assert {f: s for f, s, _ in get_dataset("fashion_mnist").options["files"]} == manifest


@needs_mirror
def test_first_300_per_class_all_from_the_training_file_in_file_order():
    data = load_dataset("fashion_mnist", mirror=str(MIRROR))
    assert data.X.shape == (3000, 784)
    assert np.bincount(data.y).tolist() == [300] * 10
    train_y = read_idx(FMNIST / "train-labels-idx1-ubyte.gz")
    train_X = read_idx(FMNIST / "train-images-idx3-ubyte.gz")
    assert train_X.shape == (60000, 28, 28) and train_y.shape == (60000,)
    rows = first_n_per_class(train_y, 300)
    assert np.all(np.diff(rows) > 0) and rows.max() < 60000  # file order, training file
    np.testing.assert_array_equal(data.X, train_X[rows].reshape(3000, 784).astype(float))
    np.testing.assert_array_equal(data.y, train_y[rows])  # labels 0..9 kept as they are


@needs_mirror
def test_a_damaged_mirror_copy_is_refused_with_its_name(tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(FMNIST, mirror / "FashionMNIST")
    labels = mirror / "FashionMNIST" / "t10k-labels-idx1-ubyte.gz"
    labels.chmod(0o644)
    labels.write_bytes(labels.read_bytes()[:-100])
    with pytest.raises(ValueError, match="sha256 mismatch") as err:
        load_dataset("fashion_mnist", mirror=str(mirror), cache=str(tmp_path / "cache"))
    assert "t10k-labels-idx1-ubyte.gz" in str(err.value)


def test_its_data_code_is_its_own():
    """The reader is hashed with Fashion-MNIST's entry, not with every data set's."""
    from ufs.pipeline import lineage
    from ufs.registry import _PKG, module_closure

    shared = module_closure(
        _PKG / "pipeline" / "data_steps.py",
        stop={(_PKG / m).resolve() for m in lineage.ENTRY_MODULES},
    )
    assert not {"idx.py", "catalog.py"} & {p.name for p in shared}
    out: dict[str, str] = {}
    lineage._function_closure(get_dataset("fashion_mnist").loader, out)
    assert "ufs.datasets.idx.read_idx" in out
    assert lineage.dataset_code("fashion_mnist") != lineage.dataset_code("orl")
