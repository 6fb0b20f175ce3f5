"""Reading the workflow's intermediate files, checked on read.

The generic helpers (atomic writes, file modes, checksummed JSON) live in
:mod:`ufs.fileio`, below both the data and the workflow layer; this module knows what the
workflow's own files must hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..fileio import cut_short, damaged, read_json

__all__ = ["read_evaluations", "read_record", "damaged_files", "INTERMEDIATE_DIRS"]

#: directories of an output directory holding the intermediate files the workflow reads
INTERMEDIATE_DIRS = ("data", "graphs", "fits", "evaluations", "mlflow")
#: the suffix of a fit job's checkpoint folder, beside its outputs (ufs.pipeline.checkpoint)
CHECKPOINT_SUFFIX = ".partial"

#: keys every evaluation record carries (ufs.pipeline.steps.evaluate)
EVALUATION_KEYS = ("dataset", "method", "pid", "params", "results")


def read_record(path: str | Path, key: str) -> list[dict[str, Any]]:
    """The list ``key`` of the JSON object in ``path`` (a chunk's fit or evaluation file),
    refused with the file's name and the remedy when the file is not such an object."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise damaged(path, f"no list {key!r} in it")
    return data[key]


def read_evaluations(paths) -> list[dict[str, Any]]:
    """Every evaluation record of the given chunk files (one record per fitted task)."""
    out = []
    for p in paths:
        records = read_record(p, "evaluations")
        for rec in records:
            missing = [k for k in EVALUATION_KEYS if not isinstance(rec, dict) or k not in rec]
            if missing:
                raise damaged(p, f"an evaluation record lacks {missing}")
        out.extend(records)
    return out


def damaged_files(output_dir: str | Path, resources_dir: str | Path) -> list[str]:
    """``<file>: <why>`` for every intermediate ``.json`` / ``.npz`` file of a run that was
    cut short (:func:`ufs.fileio.cut_short`): checked when the workflow plans, since a file
    truncated after it was written keeps its mtime and nothing would re-read it. A fit
    job's checkpoint folder (:mod:`ufs.pipeline.checkpoint`) is left out: the job itself
    refits what was cut short there."""
    roots = [Path(output_dir) / d for d in INTERMEDIATE_DIRS] + [Path(resources_dir) / "raw"]
    found = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.parent.suffix == CHECKPOINT_SUFFIX:
                continue
            if path.suffix in (".json", ".npz") and not path.name.startswith("."):
                why = cut_short(path)
                if why:
                    found.append(f"{path}: {why}")
    return found
