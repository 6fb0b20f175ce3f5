"""Datasets given as a file in the workflow config (no Python needed to add one).

A config entry ::

    datasets:
      my_data:
        file: data/my_data.mat      # relative to the working directory
        sha256: 3f1c…               # optional; a mismatch is an error, the file is not used
        variables: [fea, gnd]       # optional, .mat / .npz: (data, labels) names
        label_column: class         # optional, .csv / .tsv / .txt: name or 0-based index
        header: auto                # optional, text: true, false or auto (the rule below)
        sep: ";"                    # optional, text: field separator
        decimal: ","                # optional, text: decimal mark
        encoding: latin-1           # optional, text: default utf-8
        h: [10, 20, 50]

Formats, chosen by the file name as given (a symlink's own name, not its target's):

* ``.mat`` — MATLAB v4–v7 through ``scipy.io.loadmat`` (the pairs X/Y, fea/gnd, M/L are
  tried after ``variables``); v7.3 (HDF5) is refused with a clear message.
* ``.npz`` — NumPy arrays ``X`` and ``y`` (or ``variables``), read with
  ``allow_pickle=False``: object arrays are refused, nothing is unpickled.
* ``.csv``, ``.tsv``, ``.txt`` (optionally ``.gz``) — one sample per row, read with
  pandas (``.txt``: whitespace-separated; ``sep`` overrides the separator, ``decimal``
  the decimal mark, e.g. ``sep: ';'`` and ``decimal: ','`` for European spreadsheets;
  ``encoding`` defaults to UTF-8, a byte order mark is skipped). The label column is
  ``label_column`` (a header name or a 0-based index, negative from the end); by default
  a column named ``label``, ``labels``, ``class``, ``y`` or ``target`` if the header has
  one, else the **last** column.

**The header rule.** ``header: true`` / ``false`` in the entry says whether the first
non-blank line is a header; ``header: auto`` (the default) decides from that line and the
rows below it within the first 100 lines, and logs the decision and its reason:

0. the fields are the integers ``0, 1, …, m−1`` (or ``1, …, m``), ``m ≥ 3`` — the
   header pandas writes for unnamed columns (``pd.DataFrame(np.c_[X, y]).to_csv(...)``)
   → **header**;
1. every field a number (either decimal mark) or a missing value (empty, ``NA``,
   ``N/A``, ``NaN``, ``null``, ``?``) → **data** (a missing value is then an error), and
   its label must recur in the label column further down: a label seen on that line only,
   in a column where other labels recur, is an error asking for ``header: true`` or
   ``false``;
2. a text field *names a column* when a number appears below it, when its text does not
   recur below it, or when it is the ``label_column`` name; some field names a column
   and none is a number → **header**; some field names a column and another is a
   number → an error asking for ``header: true`` or ``false``;
3. otherwise (its texts recur below, like string class labels) → **data**.

Labels may be integers, floats or strings: they are re-encoded to ``0..k−1`` in sorted
order (:func:`ufs.validation.check_labels`). Missing labels, non-numeric features,
NaN / inf, a single class, mismatched lengths, an empty file and unknown variable names
are errors naming the file and the problem; constant features follow the library's rule
(removed before fitting, reported, never selected).

:func:`peek_shape` reads only what it needs for the number of features (the ``.mat``
variable table, the first 100 lines of a text file; an ``.npz`` is read whole, which also
refuses object arrays), so the workflow can check ``h < p`` when it plans the jobs,
before any job runs.

Size (~600 lines): one reader per file format a user may bring (``.mat``, ``.npz``,
CSV/TSV/text, optionally gzipped) with the guesses a text file needs announced (header,
label column, encoding); they share the validation and the messages, so they stay
together.
"""

from __future__ import annotations

import codecs
import io
import itertools
import logging
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import check_data, check_labels
from .mirror import open_binary, pick_variables, read_mat, sha256_file, verify_sha256
from .registry import Dataset

__all__ = [
    "FILE_FORMATS",
    "file_format",
    "peek_shape",
    "peek_n_classes",
    "read_data_file",
    "load_user_file",
]

FILE_FORMATS = (".mat", ".npz", ".csv", ".tsv", ".txt")
_LABEL_NAMES = ("label", "labels", "class", "y", "target")
_NPZ_PAIRS = (("X", "y"), ("X", "Y"), ("fea", "gnd"))
log = logging.getLogger(__name__)


def file_format(path: str | Path) -> str:
    """The format suffix of ``path`` (``.gz`` is looked through for text files)."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
        if suffixes and suffixes[-1] in (".csv", ".tsv", ".txt"):
            return suffixes[-1]
    elif suffixes and suffixes[-1] in FILE_FORMATS:
        return suffixes[-1]
    raise ValueError(
        f"{path}: unknown dataset file format; use one of {', '.join(FILE_FORMATS)} "
        "(text formats may be gzip-compressed, e.g. data.csv.gz)"
    )


def _check_file(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise ValueError(f"{p}: no such dataset file")
    if p.stat().st_size == 0:
        raise ValueError(f"{p}: the dataset file is empty")
    return p


# -- text --------------------------------------------------------------------------
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "?"})
_SAMPLE_LINES = 100  # lines the header decision (and the planner's peek) looks at
_DEFAULT_SEP = {".csv": ",", ".tsv": "\t", ".txt": None}


def _text_options(
    path: Path, fmt: str, sep: str | None, decimal: str | None, encoding: str | None
) -> tuple[str | None, str, str]:
    """Checked ``(sep, decimal, encoding)``; ``sep`` ``None`` = whitespace."""
    sep = _DEFAULT_SEP[fmt] if sep is None else sep
    decimal = "." if decimal is None else decimal
    encoding = encoding or "utf-8-sig"
    if sep is not None and (not isinstance(sep, str) or not sep):
        raise ValueError(f"{path}: sep must be a non-empty string; got {sep!r}")
    if not isinstance(decimal, str) or len(decimal) != 1:
        raise ValueError(f"{path}: decimal must be one character; got {decimal!r}")
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValueError(f"{path}: unknown encoding {encoding!r}") from None
    return sep, decimal, encoding


def _read_text_lines(path: Path, encoding: str, max_lines: int | None = None) -> str:
    """The decoded text (the first ``max_lines`` lines if given), BOM removed.

    A byte that is not valid in ``encoding`` is an error naming the line.
    """
    try:
        with open_binary(path) as fh:
            if max_lines is None:
                data = fh.read()
            else:
                data = b"".join(itertools.islice(iter(fh.readline, b""), max_lines))
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read the file ({type(exc).__name__}: {exc})") from None
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(data, final=max_lines is None)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1]
        hint = (
            "set encoding: latin-1 (cp1252 for files from Excel on Windows) in the dataset's "
            "config entry, or re-save the file as UTF-8"
            if encoding.lower().replace("_", "-").startswith("utf")
            else "set the file's encoding with encoding: in the dataset's config entry"
        )
        raise ValueError(
            f"{path}, line {line}: byte {bad!r} is not valid {encoding.removesuffix('-sig')} "
            f"text; {hint}"
        ) from None
    return text.removeprefix("\ufeff")


def _number(s: str, decimal: str) -> float | None:
    """``s`` as a float, or ``None``; with ``decimal`` other than ``.``, a ``.`` is refused
    (it would be a thousands separator)."""
    s = s.strip()
    if decimal != ".":
        if "." in s:
            return None
        s = s.replace(decimal, ".")
    try:
        return float(s)
    except ValueError:
        return None


def _kind(v: str) -> str:
    """``missing``, ``number`` (either decimal mark) or ``word``: the header rule's classes."""
    s = v.strip()
    if s.lower() in _MISSING:
        return "missing"
    return "number" if _number(s, ".") is not None or _number(s, ",") is not None else "word"


_DECIMAL_COMMA = re.compile(r"\s*[-+]?\d*,\d+\s*")


def _sep_hint(value: str, line: str, sep: str | None, decimal: str, lead: str = "") -> str:
    """The options that would make ``value`` (in ``line``) a number, as a message tail."""
    if decimal != "." and "." in value and _number(value.replace(".", ""), decimal) is not None:
        return f"; thousands separators are not supported: remove the '.' (decimal is {decimal!r})"
    fixes = []
    if decimal != "," and _DECIMAL_COMMA.fullmatch(value):
        fixes.append("decimal: ','")
    else:
        other = next((c for c in (";", "\t", ",") if c not in (sep, decimal) and c in value), None)
        if other is not None:
            fixes.append(f"sep: {other!r}")
            if decimal != "," and any(_DECIMAL_COMMA.fullmatch(s) for s in line.split(other)):
                fixes.append("decimal: ','")
    if not fixes:
        return ""
    return f"; {lead}set {' and '.join(fixes)} in the dataset's config entry"


def _parse(
    path: Path, text: str, sep: str | None, *, sample: bool = False
) -> list[tuple[int, list[str]]]:
    """Non-blank rows of ``text`` as ``(1-based line, fields)``; a ``sample`` (the first
    lines, for the planner) skips over-long rows, which the full read reports."""
    import pandas as pd

    if not text.strip():
        raise ValueError(f"{path}: the dataset file has no data rows")
    try:
        table = pd.read_csv(
            io.StringIO(text),
            sep=r"\s+" if sep is None else sep,
            header=None,
            dtype=str,
            na_filter=False,
            skip_blank_lines=False,
            on_bad_lines="skip" if sample else "error",
        )
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if m is None:
            raise ValueError(f"{path}: cannot parse the file ({exc})") from None
        n, line, saw = m.groups()
        src = text.splitlines()[int(line) - 1] if int(line) <= len(text.splitlines()) else ""
        raise ValueError(
            f"{path}, line {line}: {saw} fields where the first row has {n}: rows have "
            f"different numbers of columns{_sep_hint(src, src, sep, '.')}"
        ) from None
    rows = table.to_numpy().tolist()
    return [(i + 1, r) for i, r in enumerate(rows) if any(v.strip() for v in r)]


def _decide_header(
    path: Path,
    rows: list[tuple[int, list[str]]],
    header: Any,
    label_column: Any,
    sep: str | None,
    decimal: str,
) -> bool:
    """Apply the header rule (module docstring) to the sample ``rows``; log the choice."""
    if isinstance(header, bool):
        log.info("%s: header: %s (from the config)", path, str(header).lower())
        return header
    if header not in (None, "auto"):
        raise ValueError(f"{path}: header must be true, false or auto; got {header!r}")
    (line, first), later = rows[0], [r for _, r in rows[1:]]
    kinds = [_kind(v) for v in first]
    words = [j for j, k in enumerate(kinds) if k == "word"]
    given = label_column.strip() if isinstance(label_column, str) else None

    def names_a_column(j: int) -> bool:  # rule 2 of the module docstring
        v = first[j].strip()
        below = [r[j].strip() for r in later if j < len(r)]
        return v == given or v not in below or any(_kind(b) == "number" for b in below)

    named = [j for j in words if names_a_column(j)]
    numeric = [j for j, k in enumerate(kinds) if k == "number"]
    if named and numeric:
        word = first[named[0]].strip()
        lead = f"if {word!r} is data, "  # e.g. '5;1' of '0,5;1,25' read with sep ','
        raise ValueError(
            f"{path}, line {line}: cannot tell whether this is a header row: "
            f"{word!r} (column {named[0]}) looks like a column name but "
            f"{first[numeric[0]].strip()!r} (column {numeric[0]}) is a number; set header: "
            "true or header: false in the dataset's config entry (or correct the value)"
            f"{_sep_hint(word, (sep or ' ').join(first), sep, decimal, lead)}"
        )
    if _column_numbers(first):
        has, why = True, "is a header: its fields are the column numbers 0, 1, 2, ... (pandas)"
    elif not words:
        has, why = False, "is data: every field is a number or a missing value"
    elif named:
        j = named[0]
        has, why = True, f"is a header: {first[j].strip()!r} (column {j}) names a column"
    else:
        j = words[0]
        has, why = False, f"is data: its text {first[j].strip()!r} (column {j}) recurs below it"
    log.info(
        "%s: header: auto -> %s (line %d %s; set header: true or false to override)",
        path,
        str(has).lower(),
        line,
        why,
    )
    return has


def _column_numbers(fields: list[str]) -> bool:
    """The header pandas and NumPy write for unnamed columns: the integers ``0..m-1`` (or
    ``1..m``), ``m >= 3``, written as integers (such a line read as data adds a
    sample and a class)."""
    v = [f.strip() for f in fields]
    if len(v) < 3 or not all(re.fullmatch(r"\d+", f) for f in v):
        return False
    start = int(v[0])
    return start in (0, 1) and [int(f) for f in v] == list(range(start, start + len(v)))


def _check_first_label_recurs(path: Path, data, j: int, line: int, decimal: str) -> None:
    """``header: auto`` took a line of numbers for data: its label must be one that
    recurs in the label column; a label seen once is what a header row of numbers gives
    (rule 1's one doubt), so it is an error asking to say which."""
    first = data[0][1][j].strip()
    key = _number(first, decimal)
    rest = [r[j].strip() for _, r in data[1:]]
    if len(set(rest)) == len(rest):
        return  # no label recurs at all: not a class column, later checks say what is wrong
    for v in rest:
        if v == first or (key is not None and _number(v, decimal) == key):
            return
    raise ValueError(
        f"{path}, line {line}: header: auto read this line of numbers as data, but its label "
        f"{first!r} (column {j}) occurs on no other line: if the line is a header, set "
        "header: true; if that class really has a single sample, set header: false "
        "(in the dataset's config entry)"
    )


def _layout(
    path: Path,
    text: str,
    rows: list[tuple[int, list[str]]],
    header: Any,
    label_column: Any,
    sep: str | None,
    decimal: str,
) -> tuple[bool, list[str], int]:
    """(has header, column names, label column index) from the first ``rows`` of ``text``."""
    sample = rows[:1] + [r for r in rows[1:_SAMPLE_LINES] if r[0] <= _SAMPLE_LINES]
    has = _decide_header(path, sample, header, label_column, sep, decimal)
    line, first = rows[0]
    names = [v.strip() for v in first] if has else [str(j) for j in range(len(first))]
    if len(first) < 2:  # the hint looks at the next line too (decimal marks of the data)
        nxt = next((s for s in text.splitlines()[line:] if s.strip()), first[0])
        raise ValueError(
            f"{path}, line {line}: {len(first)} column(s); need at least one feature and a "
            f"label{_sep_hint(first[0], nxt, sep, decimal)}"
        )
    return has, names, _label_index(path, names, has, label_column)


def _label_index(path: Path, fields: list[str], header: bool, label_column: Any) -> int:
    n = len(fields)
    if label_column is None:
        if header:
            for i, f in enumerate(fields):
                if f.lower() in _LABEL_NAMES:
                    return i
        return n - 1
    if isinstance(label_column, str) and not label_column.lstrip("-").isdigit():
        if not header:
            raise ValueError(
                f"{path}: label_column {label_column!r} is a name but the file has no header "
                "row (set header: true if its first line is one)"
            )
        if label_column not in fields:
            raise ValueError(
                f"{path}: label_column {label_column!r} is not a column; the header has {fields}"
            )
        return fields.index(label_column)
    i = int(label_column)
    if not -n <= i < n:
        raise ValueError(f"{path}: label_column {i} is out of range for {n} columns")
    return i % n


def _read_text(
    path: Path, fmt: str, label_column: Any, header: Any, sep, decimal, encoding
) -> tuple[np.ndarray, np.ndarray]:
    sep, decimal, encoding = _text_options(path, fmt, sep, decimal, encoding)
    text = _read_text_lines(path, encoding)
    rows = _parse(path, text, sep)
    has, names, j = _layout(path, text, rows, header, label_column, sep, decimal)
    data = rows[1:] if has else rows
    if not data:
        raise ValueError(f"{path}: the dataset file has a header but no data rows")
    lines = [line for line, _ in data]
    y = np.array([r[j].strip() for _, r in data], dtype=str)
    missing = np.flatnonzero([v.lower() in _MISSING for v in y])
    if missing.size:
        raise ValueError(
            f"{path}, line {lines[missing[0]]}: missing label {str(y[missing[0]])!r} in column "
            f"{_column(names, j, has)} ({missing.size} missing label(s) in all)"
        )
    if header in (None, "auto") and not has and len(data) > 1:
        _check_first_label_recurs(path, data, j, data[0][0], decimal)
    feats = np.delete(np.array([r for _, r in data], dtype=str), j, axis=1)
    try:  # fast path; the loop below defines what a number is and names the first bad value
        if decimal != "." and np.char.find(feats, ".").max() >= 0:
            raise ValueError
        X = np.char.replace(feats, decimal, ".").astype(np.float64)  # nan/inf: check_data
    except ValueError:
        X = np.empty(feats.shape)
        for (i, c), v in np.ndenumerate(feats):
            x = _number(v, decimal)
            if x is None:
                raise ValueError(
                    _bad_value(
                        path, str(v).strip(), data[i], names, c + (c >= j), has, sep, decimal
                    )
                ) from None
            X[i, c] = x
    _check_finite(path, X, feats, lines, names, j, has)
    labels = [_number(v, decimal) for v in y]
    return X, (np.array(labels) if None not in labels else y)


def _check_finite(path: Path, X, feats, lines: list[int], names, j: int, has: bool) -> None:
    """NaN / inf cells named by the file's line and the column's header,
    not by the position in the matrix left after the label column and blank lines went."""
    bad = ~np.isfinite(X)
    if not bad.any():
        return
    i, c = np.argwhere(bad)[0]
    col = c + (c >= j)  # the column in the file: the label column is not in X
    raise ValueError(
        f"{path}, line {lines[i]}: feature value {str(feats[i, c]).strip()!r} in column "
        f"{_column(names, col, has)} is not a finite number ({int(bad.sum())} NaN / inf "
        "value(s) in all); remove or impute them before use"
    )


def _column(names: list[str], j: int, header: bool) -> str:
    return f"{j} ({names[j]!r})" if header else str(j)


def _bad_value(path, v: str, row, names, c: int, has: bool, sep, decimal) -> str:
    """The message for feature value ``v`` in column ``c`` of ``row = (line, fields)``."""
    if v.lower() in _MISSING:
        what, hint = "missing", ""
    else:
        line = (sep or " ").join(row[1])
        what, hint = "non-numeric", _sep_hint(v, line, sep, decimal, "if it is a number, ")
    where = f"{path}, line {row[0]}"
    return f"{where}: {what} feature value {v!r} in column {_column(names, c, has)}{hint}"


# -- npz ---------------------------------------------------------------------------
def _read_npz(path: Path, variables) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as f:
            xn, yn = pick_variables(path, f.files, variables, _NPZ_PAIRS)
            return f[xn], f[yn]
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
    except ValueError as exc:
        if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
            raise ValueError(
                f"{path}: holds object arrays, which would need unpickling; store numeric "
                "(or fixed-width string) arrays"
            ) from None
        raise


# -- public --------------------------------------------------------------------------
def _text_only(path: Path, fmt: str, **options: Any) -> None:
    given = sorted(k for k, v in options.items() if v is not None)
    if fmt in (".mat", ".npz") and given:
        raise ValueError(f"{path}: {', '.join(given)} apply to text files only, not {fmt}")


def read_data_file(
    path: str | Path,
    *,
    variables: Sequence[str] | None = None,
    label_column: Any = None,
    header: bool | str | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Raw ``(X, y)`` of a dataset file (see the module docstring for the formats and the
    text options ``header``, ``sep``, ``decimal``, ``encoding``)."""
    p = _check_file(path)
    fmt = file_format(p)
    _text_only(p, fmt, header=header, sep=sep, decimal=decimal, encoding=encoding)
    if variables is not None and (
        len(variables) != 2 or not all(isinstance(v, str) for v in variables)
    ):
        raise ValueError(f"{p}: variables must be two names [data, labels]; got {variables!r}")
    if fmt == ".mat":
        return read_mat(p, variables)
    if fmt == ".npz":
        return _read_npz(p, variables)
    return _read_text(p, fmt, label_column, header, sep, decimal, encoding)


def peek_shape(
    path: str | Path,
    *,
    variables: Sequence[str] | None = None,
    label_column: Any = None,
    header: bool | str | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> tuple[int | None, int]:
    """``(n_samples or None, n_features)``; reads the whole file only for ``.npz`` (the
    first lines of a text file, to apply the header rule and find the label column)."""
    p = _check_file(path)
    fmt = file_format(p)
    _text_only(p, fmt, header=header, sep=sep, decimal=decimal, encoding=encoding)
    if fmt == ".mat":
        from scipy.io import whosmat

        try:
            info = {name: shape for name, shape, _ in whosmat(p)}
        except Exception as exc:  # truncated / not a MAT file / v7.3
            raise ValueError(
                f"{p}: not a readable MATLAB v4-v7 file ({type(exc).__name__}: {exc})"
            ) from None
        xn, yn = pick_variables(p, info, variables)
        (a, b), ny = info[xn], int(np.prod(info[yn]))
        return (b, a) if (a != ny and b == ny) else (a, b)  # as read_mat orients X
    if fmt == ".npz":
        X, _ = _read_npz(p, variables)
        if X.ndim != 2:
            raise ValueError(f"{p}: the data array must be 2-D; got shape {X.shape}")
        return X.shape
    sep, decimal, encoding = _text_options(p, fmt, sep, decimal, encoding)
    text = _read_text_lines(p, encoding, _SAMPLE_LINES)
    rows = _parse(p, text, sep, sample=True)
    _, names, _ = _layout(p, text, rows, header, label_column, sep, decimal)
    return None, len(names) - 1


def peek_n_classes(path: str | Path, *, variables: Sequence[str] | None = None) -> int | None:
    """Number of classes of a ``.npz`` or ``.mat`` dataset file, reading its labels only
    (the variable pair as :func:`read_data_file` picks it); ``None`` for a text file (the
    whole file would have to be parsed) or labels this cannot read (reading the file
    reports them)."""
    p = Path(path)
    try:
        fmt = file_format(p)
        if fmt == ".npz":
            with np.load(p, allow_pickle=False) as f:
                y = f[pick_variables(p, f.files, variables, _NPZ_PAIRS)[1]]
        elif fmt == ".mat":
            from scipy.io import loadmat, whosmat

            yname = pick_variables(p, [name for name, _, _ in whosmat(p)], variables)[1]
            y = loadmat(p, variable_names=[yname])[yname]
        else:
            return None
        return int(np.unique(np.asarray(y).ravel()).size)
    except Exception:  # unreadable labels: reading the file names the problem
        return None


def load_user_file(
    name: str,
    file: str | Path,
    *,
    sha256: str = "",
    variables: Sequence[str] | None = None,
    label_column: Any = None,
    header: bool | str | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> Dataset:
    """Read, verify (``sha256`` if given) and validate a dataset file.

    Raises ``ValueError`` naming the file and the problem; nothing is returned for a
    file that fails any check.
    """
    p = _check_file(file)
    if sha256:
        verify_sha256(p, sha256)
    digest = sha256.strip().lower() if sha256 else sha256_file(p)  # hashed once
    X, y = read_data_file(
        p,
        variables=variables,
        label_column=label_column,
        header=header,
        sep=sep,
        decimal=decimal,
        encoding=encoding,
    )
    X = check_data(X, name=f"dataset {name!r} ({p})")
    try:
        y = check_labels(y, X.shape[0], min_classes=2)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"dataset {name!r} ({p}): {exc}") from None
    return Dataset(
        name=name,
        X=X,
        y=y,
        meta={"source": "file", "file": str(p), "sha256": digest},
    )
