"""Intermediate files are checked on read and before a run: a file cut short
or changed after it was written is refused with its name and the remedy, never read as if
it were whole."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from ufs.fileio import (
    CHECKSUM_KEY,
    DamagedFileError,
    cut_short,
    read_json,
    read_npz,
    write_json,
    write_npz,
)
from ufs.pipeline.io import damaged_files, read_evaluations

RECORD = {"dataset": "d", "method": "m", "pid": "p", "params": {}, "results": [{"acc": 0.5}]}


def test_json_round_trip_records_and_strips_its_checksum(tmp_path):
    f = tmp_path / "a.json"
    write_json(f, {"x": [1.5, np.float64(2.25)], "y": {"z": None}})
    assert CHECKSUM_KEY in json.loads(f.read_text())
    assert read_json(f) == {"x": [1.5, 2.25], "y": {"z": None}}


def test_a_json_file_without_checksum_is_read_as_it_is(tmp_path):
    f = tmp_path / "hand.json"
    f.write_text('{"a": 1}')
    assert read_json(f) == {"a": 1}


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
def test_a_truncated_json_names_the_file_and_the_remedy(tmp_path, keep):
    f = tmp_path / "evaluations" / "c000.json"
    write_json(f, {"evaluations": [RECORD] * 20})
    text = f.read_text()
    f.write_text(text[: int(len(text) * keep)])
    with pytest.raises(DamagedFileError, match=r"c000\.json is damaged.*Delete it and re-run"):
        read_json(f)
    assert cut_short(f) is not None


def test_an_edit_that_still_parses_is_caught_by_the_checksum(tmp_path):
    f = tmp_path / "e.json"
    write_json(f, {"evaluations": [RECORD]})
    f.write_text(f.read_text().replace('"acc": 0.5', '"acc": 0.9'))
    json.loads(f.read_text())  # still valid JSON
    assert cut_short(f) is None  # the quick look cannot tell ...
    with pytest.raises(DamagedFileError, match="does not match the sha256"):
        read_json(f)  # ... the read can


def test_a_verified_file_edited_later_is_caught_again(tmp_path):
    """Verification is remembered per exact text (a report reads a file several times):
    the same bytes are not re-verified, an edit after a good read still is."""
    f = tmp_path / "a.json"
    write_json(f, {"acc": 0.5, "h": [1, 2]})
    assert read_json(f) == read_json(f) == {"acc": 0.5, "h": [1, 2]}
    f.write_text(f.read_text().replace("0.5", "0.9"))
    with pytest.raises(DamagedFileError, match="sha256"):
        read_json(f)
    good = tmp_path / "b.json"
    write_json(good, {"acc": 0.5, "h": [1, 2]})
    bad = tmp_path / "c.json"  # another file with the text of the edited one
    bad.write_text(f.read_text())
    with pytest.raises(DamagedFileError, match="sha256"):
        read_json(bad)


def test_an_empty_json_is_damaged(tmp_path):
    f = tmp_path / "e.json"
    f.write_text("")
    with pytest.raises(DamagedFileError, match="empty"):
        read_json(f)
    assert cut_short(f) == "empty"


def test_evaluation_files_are_checked_for_their_shape(tmp_path):
    good, bad, nolist = tmp_path / "g.json", tmp_path / "b.json", tmp_path / "n.json"
    write_json(good, {"evaluations": [RECORD]})
    write_json(bad, {"evaluations": [{"dataset": "d"}]})
    write_json(nolist, {"dataset": "d"})
    assert read_evaluations([good]) == [RECORD]
    with pytest.raises(DamagedFileError, match=r"b\.json.*lacks \['method'"):
        read_evaluations([good, bad])
    with pytest.raises(DamagedFileError, match=r"n\.json.*no list 'evaluations'"):
        read_evaluations([nolist])


@pytest.mark.parametrize("cut", [1, 30, 200])
def test_a_truncated_npz_is_damaged(tmp_path, cut):
    f = tmp_path / "d.npz"
    write_npz(f, X=np.arange(300.0).reshape(30, 10), y=np.arange(30))
    f.write_bytes(f.read_bytes()[:-cut])
    assert cut_short(f) == "truncated: no end-of-archive record"
    with pytest.raises(DamagedFileError, match=r"d\.npz is damaged"):
        read_npz(f)


def test_a_flipped_byte_in_an_npz_fails_its_crc(tmp_path):
    f = tmp_path / "d.npz"
    write_npz(f, X=np.arange(300.0))
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.raises(DamagedFileError, match=r"d\.npz is damaged"):
        read_npz(f)


def test_read_npz_names_missing_arrays(tmp_path):
    f = tmp_path / "d.npz"
    write_npz(f, X=np.zeros(2))
    with pytest.raises(DamagedFileError, match=r"arrays \['y'\] missing"):
        read_npz(f, required=("X", "y"))


def test_damaged_files_lists_exactly_the_cut_files_keeping_their_mtime(tmp_path):
    out, res = tmp_path / "results", tmp_path / "resources"
    write_json(out / "evaluations" / "wine" / "a.c000.json", {"evaluations": [RECORD]})
    write_json(out / "evaluations" / "wine" / "b.c000.json", {"evaluations": [RECORD]})
    write_npz(res / "raw" / "wine.npz", X=np.zeros((3, 2)))
    write_json(out / "tables" / "not_checked.json", {"a": 1})
    assert damaged_files(out, res) == []
    victim = out / "evaluations" / "wine" / "b.c000.json"
    st = victim.stat()
    victim.write_text(victim.read_text()[:40])
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))  # Snakemake sees nothing
    raw = res / "raw" / "wine.npz"
    raw.write_bytes(raw.read_bytes()[:-5])
    found = damaged_files(out, res)
    assert [f.split(":")[0] for f in found] == [str(victim), str(raw)]


def test_a_damaged_cached_graph_is_named(tmp_path):
    """Cached kNN graphs are read through the same check as every other .npz."""
    import scipy.sparse as sp

    from ufs.pipeline.steps import _load_graph

    f = tmp_path / "g.npz"
    sp.save_npz(f, sp.random(20, 20, density=0.2, format="csr", random_state=0))
    assert _load_graph(f).shape == (20, 20)
    f.write_bytes(f.read_bytes()[:-30])
    with pytest.raises(DamagedFileError, match=r"g\.npz is damaged"):
        _load_graph(f)
