"""A job's set-up (``workflow/scripts/_job.py``) removes the temporary files that an attempt
killed in the middle of an atomic write (``ufs.fileio.atomic_path``) left beside the job's
outputs, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ufs.fileio import atomic_path, write_json

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"
sys.path.insert(0, str(SCRIPTS))

import _job  # noqa: E402


@pytest.mark.parametrize(
    "name, suffix",
    [("m.c000.npz", ".npz"), ("m.c000.json", None), ("ranks.tex", ".tmp"), ("README", None)],
)
def test_the_pattern_matches_what_atomic_path_writes(tmp_path, name, suffix):
    out = tmp_path / name
    with atomic_path(out, suffix=suffix) as tmp:
        assert _job.stale_temporaries([out]) == [tmp]
    assert _job.stale_temporaries([out]) == []  # renamed into place


def test_only_the_outputs_own_temporaries_are_found(tmp_path):
    out = tmp_path / "fits" / "kmeans_ufs.c000.npz"
    out.parent.mkdir()
    stale = out.parent / ".kmeans_ufs.c000.npz.ab_c12z9.npz"
    keep = [
        out.parent / ".kmeans_ufs.c001.npz.ab_c12z9.npz",  # another job's output
        out.parent / ".kmeans_ufs.c000.npz.too_long_9.npz",  # not mkstemp's 8 characters
        out.parent / "kmeans_ufs.c000.npz.ab_c12z9.npz",  # not hidden
        out.parent / ".kmeans_ufs.c000.npz.ab_c12z9.npz.d",  # not a file name it writes
    ]
    for f in [stale, *keep]:
        f.write_bytes(b"x")
    (out.parent / ".kmeans_ufs.c000.npz.folder00").mkdir()  # a folder is never removed
    assert _job.stale_temporaries([out, tmp_path / "missing" / "x.json"]) == [stale]


def test_a_job_starting_removes_them_and_says_so(tmp_path):
    out = tmp_path / "evaluations" / "wine" / "random.c000.json"
    write_json(out, {"old": 1})  # an earlier, complete version stays until replaced
    stale = out.parent / ".random.c000.json.k2l9x0_q.json"
    stale.write_text('{"cut')
    log = tmp_path / "job.log"
    code = (
        f"import sys, types; sys.path.insert(0, {str(SCRIPTS)!r}); import _job; "
        f"_job.setup(types.SimpleNamespace(log=[{str(log)!r}], output=[{str(out)!r}], "
        "threads=1, config={'jobs': {'warm_workers': False}}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert not stale.exists() and out.is_file()
    assert f"removed {stale}: a temporary file a killed attempt left" in log.read_text()


def test_outputs_sharing_a_folder_are_each_found(tmp_path):
    """A figure job's PNG and PDF twins: one folder, read once for both."""
    png, pdf = tmp_path / "acc_vs_h.png", tmp_path / "acc_vs_h.pdf"
    stale = [tmp_path / ".acc_vs_h.png.a1b2c3d4.png", tmp_path / ".acc_vs_h.pdf.zz__9x0q.pdf"]
    kept = tmp_path / ".nmi_vs_h.png.a1b2c3d4.png"
    for f in [*stale, kept]:
        f.write_bytes(b"x")
    assert _job.stale_temporaries([png, pdf]) == sorted(stale)
