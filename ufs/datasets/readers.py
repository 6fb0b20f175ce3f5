"""Readers of the file layouts of the mirror's ``PMLB/`` and ``Extended/`` data sets.

Each reader takes the local path that :func:`ufs.datasets.mirror.fetch_file` returns — the
mirror's copy, which may be gzip-compressed (a name ending in ``.gz``), or the cache's
download of the public file, which is not — and returns ``(X, y)``: the features as stored
(samples × features) and the labels as stored (numbers or strings; the registry re-encodes
them to ``0..k−1``). A file that does not have the layout is refused with a ``ValueError``
naming it and what is wrong (another data set's file, a truncated download).

Layouts:

* :func:`read_pmlb_tsv` — the Penn Machine Learning Benchmarks (PMLB; Romano et al.,
  Bioinformatics 38(3), 2022; ``EpistasisLab/pmlb``) ``datasets/<name>/<name>.tsv.gz``:
  tab-separated, a header row, the label in the column ``target``.
* :func:`read_gene_table` — the cancer gene-expression benchmark of de Souto et al. (BMC
  Bioinformatics 9:497, 2008), ``*_database.txt`` as shipped by ``padilha/biclustlib``:
  tab-separated **genes × samples**, the first row ``GENES`` and one class label per
  sample, the first column the gene id; transposed here to samples × genes.
* :func:`read_csv_label_last` — the ``*.data`` files of ``jadsoncastro/UnifiedView``
  (Gertrudes et al., Data Min. Knowl. Disc. 33, 2019): comma-separated numbers, no header,
  the class in the last column.
* :func:`read_mat_label_last` — one MATLAB matrix whose last column is the label (ARCENE as
  shipped by ``wzkhan89/TOCDMB_Sourcecode``).
* :func:`read_ts` — the sktime / UEA-UCR ``.ts`` text format (Löning et al., sktime, 2019):
  ``@`` header lines, then after ``@data`` one series per line, ``v1,v2,…,vm:label``;
  univariate, equal-length series only.
* :func:`read_rda_frame` — one data frame of an R data file (``.rda``), through the small
  reader of :mod:`ufs.datasets.rdata`: the numeric columns are the features, one factor
  column the label.

Only the catalog imports this module: a change here changes the data code version of the
data sets whose loaders use the changed reader, and of no other
(:func:`ufs.pipeline.lineage.dataset_code`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .mirror import open_text

__all__ = [
    "read_csv_label_last",
    "read_gene_table",
    "read_mat_label_last",
    "read_pmlb_tsv",
    "read_rda_frame",
    "read_ts",
]


def _numeric(values: np.ndarray, path: Path, what: str) -> np.ndarray:
    """``values`` as float64, or a ``ValueError`` naming the first field that is no number."""
    try:
        return np.asarray(values, dtype=np.float64)
    except ValueError:
        flat = np.asarray(values, dtype=object).ravel()
        for v in flat:
            try:
                float(v)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}: {what} holds a field that is not a number: {v!r}"
                ) from None
        raise


def read_pmlb_tsv(
    path: str | Path, *, label: str = "target", drop: Sequence[str] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a PMLB ``.tsv`` / ``.tsv.gz`` file: ``label`` is the label column, the
    other columns are the features in file order, without the identifier columns ``drop``
    (e.g. Musk's ``molecule_name``, ``conformation_name``). ``ValueError`` when the header
    lacks ``label`` or a ``drop`` column, or a feature is not numeric."""
    import pandas as pd

    path = Path(path)
    try:
        with open_text(path) as fh:
            df = pd.read_csv(fh, sep="\t", header=0)
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path}: not a PMLB tab-separated file ({exc})") from None
    missing = [c for c in (label, *drop) if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: no column {', '.join(map(repr, missing))} in the header "
            f"{list(df.columns)[:8]}{' …' if df.shape[1] > 8 else ''} (not a PMLB file of this set?)"
        )
    y = df[label].to_numpy()
    features = df.drop(columns=[label, *drop])
    return _numeric(features.to_numpy(), path, "a feature column"), y


def read_gene_table(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a de Souto et al. (2008) ``*_database.txt`` (optionally ``.gz``):
    genes × samples, tab-separated; the first row is ``GENES`` and the samples' class
    labels, the first column the gene ids. Returned transposed: samples × genes, the
    labels as strings. ``ValueError`` when the first field is not ``GENES``, a row's
    length differs from the header's or a value is not numeric."""
    path = Path(path)
    try:
        with open_text(path) as fh:
            rows = [ln.rstrip("\r\n").split("\t") for ln in fh if ln.strip()]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable text file ({exc})") from None
    if not rows or rows[0][0].strip().upper() != "GENES":
        first = rows[0][0][:20] if rows else "nothing"
        raise ValueError(
            f"{path}: not a de Souto genes × samples table (the first field is {first!r}, "
            "expected 'GENES')"
        )
    labels = [s.strip() for s in rows[0][1:]]
    width = len(rows[0])
    bad = next((i for i, r in enumerate(rows) if len(r) != width), None)
    if bad is not None:
        raise ValueError(
            f"{path}: line {bad + 1} has {len(rows[bad])} fields, the header {width} "
            "(one label per sample column)"
        )
    if len(rows) < 2 or width < 3:
        raise ValueError(f"{path}: a genes × samples table needs ≥ 1 gene and ≥ 2 samples")
    values = _numeric(np.array([r[1:] for r in rows[1:]], dtype=object), path, "the table")
    return np.ascontiguousarray(values.T), np.asarray(labels)


def read_csv_label_last(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a comma-separated numeric file without header (optionally ``.gz``),
    the label in the last column. ``ValueError`` for a header line, ragged rows, a
    non-numeric field or fewer than two columns."""
    import pandas as pd

    path = Path(path)
    try:
        with open_text(path) as fh:
            df = pd.read_csv(fh, sep=",", header=None)
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path}: not a comma-separated numeric file ({exc})") from None
    if df.shape[1] < 2:
        raise ValueError(f"{path}: {df.shape[1]} column(s); expected features and a label")
    table = _numeric(df.to_numpy(), path, "the table")
    if np.isnan(table).any():
        raise ValueError(f"{path}: empty or missing fields (ragged rows?)")
    return table[:, :-1], table[:, -1]


def read_mat_label_last(path: str | Path, *, variable: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the matrix ``variable`` of a MATLAB v4–v7 ``.mat`` file whose last
    column is the label. ``ValueError`` when the file does not hold ``variable`` as a 2-D
    matrix of at least two columns (v7.3 files are refused as by
    :func:`ufs.datasets.mirror.read_mat`)."""
    import scipy.sparse as sp
    from scipy.io import loadmat

    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(512)
    if head.startswith(b"MATLAB 7.3") or b"\x89HDF\r\n\x1a\n" in head:
        raise ValueError(f"{path} is a MATLAB v7.3 (HDF5) file, which scipy.io.loadmat cannot read")
    try:
        data = loadmat(path)
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise ValueError(f"{path}: not a readable .mat file ({exc})") from None
    if variable not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise ValueError(f"{path}: no variable {variable!r}; the file holds {found}")
    M = data[variable]
    M = M.toarray() if sp.issparse(M) else np.asarray(M)
    if M.ndim != 2 or M.shape[1] < 2:
        raise ValueError(
            f"{path}: {variable!r} is {M.shape}; expected samples × (features + label)"
        )
    return M[:, :-1], M[:, -1]


def _ts_series(path: Path) -> tuple[list[list[str]], list[str]]:
    """The series and labels after ``@data`` of one ``.ts`` file (text fields)."""
    series: list[list[str]] = []
    labels: list[str] = []
    in_data = False
    try:
        with open_text(path) as fh:
            for number, line in enumerate(fh, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                if not in_data:
                    if text.lower() == "@data":
                        in_data = True
                    elif not text.startswith("@"):
                        raise ValueError(
                            f"{path}: line {number} is neither a comment, an @ header nor "
                            "@data (not a .ts file?)"
                        )
                    continue
                parts = text.split(":")
                if len(parts) != 2:
                    raise ValueError(
                        f"{path}: line {number} has {len(parts) - 1} ':' separators; only "
                        "univariate series with a class label (values:label) are read"
                    )
                series.append(parts[0].split(","))
                labels.append(parts[1].strip())
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable .ts text file ({exc})") from None
    if not in_data:
        raise ValueError(f"{path}: no @data line (not a sktime .ts file)")
    if not series:
        raise ValueError(f"{path}: no series after @data")
    return series, labels


def read_ts(paths: str | Path | Sequence[str | Path]) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of one or several sktime ``.ts`` files (optionally ``.gz``), their series
    concatenated in the order given (e.g. TRAIN then TEST): one row per series, one column
    per time point, the labels as strings. ``ValueError`` for a file without ``@data``, a
    multivariate or unlabelled series, unequal lengths, or a missing value (``?``)."""
    files = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    rows: list[np.ndarray] = []
    labels: list[str] = []
    for path in files:
        series, lab = _ts_series(path)
        lengths = {len(s) for s in series}
        if len(lengths) != 1:
            raise ValueError(
                f"{path}: series of lengths {sorted(lengths)}; only equal lengths are read"
            )
        if any("?" in s for s in series):
            raise ValueError(f"{path}: missing values ('?') in a series")
        rows.append(_numeric(np.array(series, dtype=object), path, "a series"))
        labels.extend(lab)
    if len({r.shape[1] for r in rows}) != 1:
        raise ValueError(
            f"{', '.join(map(str, files))}: the files' series have different lengths "
            f"{[r.shape[1] for r in rows]}"
        )
    return np.concatenate(rows), np.asarray(labels)


def read_rda_frame(path: str | Path, *, frame: str, label: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the data frame ``frame`` of an R data file (:mod:`ufs.datasets.rdata`):
    every column but ``label`` is a feature (numeric, in column order), ``label`` a factor
    whose level names are the labels. ``ValueError`` when the file does not hold ``frame``,
    it is not a data frame, ``label`` is not one of its factor columns, or another column is
    not numeric."""
    from .rdata import RFactor, read_rdata

    path = Path(path)
    objects = read_rdata(path)
    if frame not in objects:
        raise ValueError(f"{path}: no object {frame!r}; the file holds {sorted(objects)}")
    columns = objects[frame]
    if not isinstance(columns, dict):
        raise ValueError(f"{path}: {frame!r} is not a data frame")
    if not isinstance(columns.get(label), RFactor):
        raise ValueError(f"{path}: data frame {frame!r} has no factor column {label!r}")
    features = {k: v for k, v in columns.items() if k != label}
    bad = [k for k, v in features.items() if isinstance(v, RFactor) or v.dtype.kind not in "fiub"]
    if bad:
        raise ValueError(f"{path}: columns {bad[:5]} of {frame!r} are not numeric")
    if not features:
        raise ValueError(f"{path}: data frame {frame!r} has no feature column")
    X = np.column_stack([np.asarray(v, dtype=np.float64) for v in features.values()])
    return X, columns[label].labels()
