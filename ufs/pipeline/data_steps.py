"""The data steps of the pipeline, ``download → standardize``: a dataset materialised and
validated, each output written atomically.

Kept apart from :mod:`ufs.pipeline.steps` (fit, evaluate) so that their jobs import NumPy and
the dataset readers only, not scikit-learn (~0.7 s of start-up per job).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import load_dataset
from ..datasets.user_files import load_user_file
from ..fileio import read_npz, write_json, write_npz
from ..preprocessing import standardize as zscore
from ..validation import check_data, check_labels

__all__ = ["download", "standardize", "load_data", "file_entry"]


#: the keys of a file dataset passed to ufs.datasets.user_files.load_user_file
_FILE_KEYS = ("file", "sha256", "variables", "label_column", "header", "sep", "decimal", "encoding")


def file_entry(config: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The ``file`` keys of ``datasets.<name>``, or ``None``. The path stays as written
    (``~`` expanded; a relative path is relative to the working directory, a symlink is
    kept as such: its own name decides the format): it is part of the download job's
    re-run trigger, and an absolute form would re-run everything after the project moved."""
    entry = ((config.get("datasets") or {}).get(name)) or {}
    if "file" not in entry:
        return None
    spec = {k: entry[k] for k in _FILE_KEYS if k in entry}
    spec["file"] = os.path.expanduser(str(spec["file"]))
    return spec


def download(
    dataset: str,
    base: str,
    seed: int,
    out: str | Path,
    *,
    mirror=None,
    cache=None,
    file: dict[str, Any] | None = None,
) -> None:
    """Materialise a dataset as ``out`` (npz: X, y, true_features): a registered one, or
    the config's ``file`` entry (:func:`ufs.datasets.user_files.load_user_file`)."""
    if file:
        d = load_user_file(base, **file)
    else:
        d = load_dataset(base, seed=seed, mirror=mirror or None, cache=cache)
    truth = d.true_features if d.true_features is not None else np.array([], dtype=np.int64)
    write_npz(out, X=d.X, y=d.y, true_features=truth, has_truth=d.true_features is not None)


def _read_raw(raw: str | Path):
    d = read_npz(raw, required=("X", "y", "true_features", "has_truth"))
    return d["X"], d["y"], d["true_features"], bool(d["has_truth"])


def standardize(
    raw: str | Path,
    out: str | Path,
    summary: str | Path,
    *,
    h: tuple[str, list[int]] | None = None,
    source: str | None = None,
) -> None:
    """Validate and z-score a raw dataset; keep the validated raw matrix beside it.

    ``h = (config key, h values)``: the largest ``h`` must not exceed the number of
    non-constant features (constant ones are never selected), checked here so that a
    bad ``h`` stops the run before any solver starts. ``source`` is what messages name
    (default: the file ``raw``); the workflow names the dataset and, for a file dataset,
    the user's file rather than its internal copy ``raw``.
    """
    X, y, truth, has_truth = _read_raw(raw)
    what = source or f"dataset file {raw}"
    try:
        X = check_data(X, name=what)
        y = check_labels(y, X.shape[0], min_classes=2)
        st = zscore(X)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(what) else f"{what}: {msg}") from None
    k, n = int(y.max()) + 1, X.shape[0]
    if k >= n:
        raise ValueError(
            f"{what}: {k} classes for {n} samples; clustering into k = {k} clusters "
            "needs more samples than clusters"
        )
    informative = int((~st.constant).sum())
    if h is not None and h[1] and max(h[1]) > informative:
        raise ValueError(
            f"config datasets.{h[0]}.h: h={max(h[1])} exceeds the {informative} non-constant "
            f"features of {what} ({int(st.constant.sum())} of {X.shape[1]} features are "
            "constant and are never selected)"
        )
    write_npz(
        out, X=st.X, X_raw=X, y=y, true_features=truth, has_truth=has_truth, constant=st.constant
    )
    write_json(
        summary,
        {
            "n_samples": X.shape[0],
            "n_features": X.shape[1],
            "n_classes": k,
            "class_sizes": np.bincount(y).tolist(),
            "constant_features": np.flatnonzero(st.constant).tolist(),
            "true_features": truth.tolist() if has_truth else None,
        },
    )


def load_data(path: str | Path) -> dict[str, Any]:
    d = read_npz(path, required=("X", "y", "true_features", "has_truth"))
    d["has_truth"] = bool(d["has_truth"])
    return d
