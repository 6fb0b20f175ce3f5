"""Text readers of dataset files (items 1, 13 and 15): byte order marks, the
header rule, encodings, separators and decimal marks, symlinked files, and messages that
name the user's file rather than the workflow's internal copy."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest

from tests.workflow_helpers import run_snakemake, write_config
from ufs.datasets.user_files import load_user_file, peek_shape, read_data_file
from ufs.pipeline import steps
from ufs.pipeline.config import ConfigError, build_plan, file_entry

X6 = np.array([[0.5, 1.25], [1.5, 2.25], [2.5, 3.25], [3.5, 4.25], [4.5, 5.25], [5.5, 6.25]])
Y6 = np.array([0, 1, 0, 1, 0, 1])


def _rows(X=X6, y=Y6, sep=",", fmt=repr) -> list[str]:
    return [sep.join([fmt(float(v)) for v in row] + [str(c)]) for row, c in zip(X, y, strict=True)]


def _write(path: Path, lines: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


def _config(path: Path, **extra) -> dict:
    return {
        "output_dir": "results",
        "resources_dir": "resources",
        "evaluation": {"restarts": 2},
        "mlflow": {"enabled": False},
        "datasets": {"userdata": {"file": str(path), "h": [1], **extra}},
        "methods": {"all_features": {}},
    }


def test_utf8_bom_does_not_hide_the_label_column(tmp_path):
    """Excel's "CSV UTF-8" starts with a BOM; ``label`` is still found (column 0)."""
    lines = ["label,f1,f2"] + [f"{c},{a},{b}" for (a, b), c in zip(X6.tolist(), Y6, strict=True)]
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    assert peek_shape(path) == (None, 2)
    X, y = read_data_file(path)
    np.testing.assert_array_equal(X, X6)
    np.testing.assert_array_equal(y, Y6)


def test_headerless_file_with_string_labels_keeps_its_first_row(tmp_path, caplog):
    names = np.array(["setosa", "virginica"])[Y6]
    path = _write(tmp_path / "iris.csv", _rows(y=names))
    with caplog.at_level(logging.INFO, logger="ufs"):
        d = load_user_file("iris", path)
    assert d.X.shape == (6, 2)  # line 1 is a sample, not a header
    np.testing.assert_array_equal(d.X, X6)
    np.testing.assert_array_equal(d.y, Y6)
    assert f"{path}: header: auto -> false (line 1 is data" in caplog.text


@pytest.mark.parametrize(
    "first, message",
    [
        ("0.5,NA,0", "line 1: missing feature value 'NA' in column 1"),
        ("0.5,,setosa", "line 1: missing feature value '' in column 1"),
        ("0.5,1.25,NA", "line 1: missing label 'NA' in column 2"),
    ],
)
def test_first_row_with_a_missing_value_is_data(tmp_path, first, message):
    """A first row with ``NA`` or an empty field is a sample with a missing value, not
    a header: an error naming line 1 instead of a silently dropped row."""
    labels = ["setosa", "virginica"] if "setosa" in first else ["0", "1"]
    rest = _rows(X6[1:], np.array(labels)[Y6[1:]])
    path = _write(tmp_path / "na.csv", [first, *rest])
    assert peek_shape(path) == (None, 2)  # the planner counts the features correctly
    with pytest.raises(ValueError, match=re.escape(f"{path}, {message}")):
        load_user_file("na", path)


def test_latin1_file_names_line_and_encoding_option(tmp_path):
    names = np.array(["caf\u00e9", "th\u00e9"])[Y6]
    path = _write(tmp_path / "latin.csv", ["a,b,boisson", *_rows(y=names)], encoding="latin-1")
    with pytest.raises(ValueError) as err:
        peek_shape(path)
    assert f"{path}, line 2: byte b'\\xe9' is not valid utf-8 text" in str(err.value)
    assert "set encoding: latin-1" in str(err.value)
    X, y = read_data_file(path, encoding="latin-1")
    np.testing.assert_array_equal(X, X6)
    np.testing.assert_array_equal(y, names)


@pytest.mark.parametrize("header", [True, False])
def test_european_decimals_need_sep_and_decimal(tmp_path, header):
    rows = _rows(sep=";", fmt=lambda v: repr(v).replace(".", ","))
    path = _write(tmp_path / "eu.csv", (["a;b;label"] if header else []) + rows)
    fix = "set sep: ';' and decimal: ',' in the dataset's config entry"
    with pytest.raises(ValueError, match=re.escape(fix)) as err:
        peek_shape(path)
    assert str(err.value).startswith(f"{path}, line ")
    with pytest.raises(ValueError, match=re.escape(fix)):
        read_data_file(path)
    assert peek_shape(path, sep=";", decimal=",") == (None, 2)
    X, y = read_data_file(path, sep=";", decimal=",")
    np.testing.assert_array_equal(X, X6)
    np.testing.assert_array_equal(y, Y6)


def test_quoted_header_fields_with_commas(tmp_path):
    path = _write(tmp_path / "q.csv", ['"weight, kg","height, cm",label', *_rows()])
    assert peek_shape(path) == (None, 2)
    X, y = read_data_file(path)
    np.testing.assert_array_equal(X, X6)
    np.testing.assert_array_equal(y, Y6)
    X, y = read_data_file(path, label_column="weight, kg")  # a quoted name as label
    np.testing.assert_array_equal(X[:, 0], X6[:, 1])
    np.testing.assert_array_equal(y, X6[:, 0])


def test_header_of_numbers_and_a_name_is_ambiguous(tmp_path):
    """Wavelengths as column names: neither guessed as data (a class 'species' of one
    sample) nor as a header; the error asks, and header: true settles it."""
    path = _write(tmp_path / "spectra.csv", ["400,410,species", *_rows(y=np.array(list("ab"))[Y6])])
    with pytest.raises(ValueError, match=re.escape("set header: true or header: false")):
        peek_shape(path)
    X, y = read_data_file(path, header=True)
    np.testing.assert_array_equal(X, X6)
    X, y = read_data_file(_write(tmp_path / "plain.csv", _rows()), header=False)
    np.testing.assert_array_equal(X, X6)


def test_symlink_name_decides_the_format(tmp_path):
    """A tab-separated file stored as ``real.csv`` and linked as ``data.tsv``: the link's
    name is the one the user wrote, so it decides (read through the target's name, it
    would be one comma-less column)."""
    real = _write(tmp_path / "real.csv", ["a\tb\tlabel", *_rows(sep="\t")])
    link = tmp_path / "data.tsv"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="1 column"):
        peek_shape(real)
    assert peek_shape(link) == (None, 2)
    X, y = read_data_file(link)
    np.testing.assert_array_equal(X, X6)
    config = _config(link)
    plan = build_plan(config)
    assert plan.instances["userdata"].file["file"] == str(link)
    raw = tmp_path / "raw.npz"
    steps.download("userdata", "userdata", 0, raw, file=file_entry(config, "userdata"))
    with np.load(raw) as z:
        np.testing.assert_array_equal(z["X"], X6)


def test_plan_passes_the_text_options(tmp_path):
    """``header``, ``sep``, ``decimal`` and ``encoding`` reach the planner's shape check."""
    rows = _rows(sep=";", fmt=lambda v: repr(v).replace(".", ","))
    path = _write(tmp_path / "eu.csv", ["caf\u00e9;b;label", *rows], encoding="latin-1")
    with pytest.raises(ConfigError, match="encoding"):
        build_plan(_config(path))
    opts = {"sep": ";", "decimal": ",", "encoding": "latin-1", "header": True}
    plan = build_plan(_config(path, **opts))
    assert plan.instances["userdata"].file == {"file": str(path), **opts}


@pytest.mark.slow
def test_workflow_reads_a_european_latin1_file_and_logs_the_header_rule(tmp_path):
    """The schema accepts the text options, the download job reads the file with them
    and its log states the header decision."""
    y = np.repeat(["caf\u00e9", "th\u00e9"], 10)
    X = np.arange(40.0).reshape(20, 2) + 0.5 * (y == "th\u00e9")[:, None]
    rows = _rows(X, y, sep=";", fmt=lambda v: repr(v).replace(".", ","))
    path = _write(tmp_path / "eu.csv", rows, encoding="latin-1")
    cfg = _config(path, sep=";", decimal=",", encoding="latin-1")
    run_snakemake(tmp_path, write_config(tmp_path, cfg))
    log = (tmp_path / "results" / "logs" / "download" / "userdata.log").read_text()
    assert f"{path}: header: auto -> false (line 1 is data" in log
    summary = json.loads((tmp_path / "results" / "data" / "userdata.json").read_text())
    assert summary["n_samples"] == 20 and summary["class_sizes"] == [10, 10]
    assert (tmp_path / "results" / "tables" / "userdata.csv").exists()


@pytest.mark.slow
def test_standardize_errors_name_the_users_file(tmp_path):
    """A file that reads but cannot be standardized for its h (h above the non-constant
    features) stops the run before any job: the message names the user's file, never
    resources/raw/<name>.npz, comes without a traceback, and nothing is written."""
    X = np.c_[X6, np.ones(6), np.ones(6)]
    path = _write(tmp_path / "mine.csv", _rows(X))
    cfg = _config(path)
    cfg["datasets"]["userdata"]["h"] = [3]
    proc = run_snakemake(tmp_path, write_config(tmp_path, cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    line = next((s for s in out.splitlines() if "exceeds the 2 non-constant" in s), "")
    assert f"features of dataset 'userdata' ({path})" in line, out[-3000:]
    assert "resources/raw" not in line
    assert "Traceback" not in out and "Error in rule" not in out, out[-3000:]
    assert not (tmp_path / "resources" / "raw" / "userdata.npz").exists()  # no job ran
    assert not list((tmp_path / "results" / "data").glob("userdata*"))


def test_pandas_default_header_of_column_numbers_is_a_header(tmp_path, caplog):
    """What config/README.md recommends, ``pd.DataFrame(np.c_[X, y]).to_csv``,
    writes the header ``0,1,2``; it must not become a sample (and a class) of its own."""
    import pandas as pd

    path = tmp_path / "pandas.csv"
    pd.DataFrame(np.c_[X6, Y6]).to_csv(path, index=False)
    assert path.read_text().splitlines()[0] == "0,1,2"
    with caplog.at_level(logging.INFO, logger="ufs.datasets.user_files"):
        X, y = read_data_file(path)
    assert X.shape == X6.shape and np.array_equal(X, X6)
    assert sorted(set(y.tolist())) == [0.0, 1.0]
    assert "header: auto -> true" in caplog.text and "column numbers" in caplog.text
    assert peek_shape(path)[1] == 2


@pytest.mark.parametrize("first", ["1,2,3", "0,1,2,3,4,5,6,7,8,9"])
def test_numbered_header_from_zero_or_one(tmp_path, first):
    m = len(first.split(","))
    rows = [",".join(["0.5"] * (m - 1) + [str(c)]) for c in (0, 1, 0, 1)]
    X, _ = read_data_file(_write(tmp_path / "n.csv", [first, *rows]))
    assert X.shape == (4, m - 1)


def test_a_numeric_first_line_whose_label_recurs_nowhere_is_refused(tmp_path):
    """A header row of numbers that are not column numbers (e.g. ``5,7,9``): its label
    field is a value seen nowhere else, so the reader asks instead of guessing."""
    path = _write(tmp_path / "h.csv", ["5,7,9", *_rows()])
    with pytest.raises(ValueError, match=r"line 1: header: auto read .* label '9' .* header: true"):
        read_data_file(path)
    X, _ = read_data_file(path, header=True)
    assert X.shape == X6.shape
    X, y = read_data_file(path, header=False)  # the user says it is a sample: taken as one
    assert X.shape == (7, 2) and len(set(y.tolist())) == 3


def test_two_integer_columns_are_not_taken_for_a_numbered_header(tmp_path):
    """``0,1`` is a plausible sample of a one-feature binary file: the rule needs m >= 3."""
    X, y = read_data_file(_write(tmp_path / "b.csv", ["0,1", "1,0", "0,1", "1,0"]))
    assert X.shape == (4, 1) and y.tolist() == [1, 0, 1, 0]


def test_nan_cell_is_named_by_file_line_and_header(tmp_path):
    """The file's line (blank and header lines counted) and the column's
    header, not the position in the matrix left after the label column went."""
    lines = ["f0,label,f2", "", "0.5,0,1.5", "1.5,1,2.5", "", "2.5,0,inf", "3.5,1,nan"]
    path = _write(tmp_path / "n.csv", lines)
    with pytest.raises(
        ValueError, match=r"n\.csv, line 6: feature value 'inf' in column 2 \('f2'\)"
    ) as e:
        read_data_file(path, label_column="label")
    assert "2 NaN / inf value(s)" in str(e.value)
