"""Fetching dataset files (mirror → cache → HTTPS) and reading them.

Order of look-up for a file-backed dataset (:func:`fetch_file`):

1. **Mirror** (config key ``mirror_dir``; ``../shared/datasets`` is one): the file is
   looked for at ``<mirror>/<filename>`` (the ``MANIFEST.tsv`` path, e.g.
   ``ALLAML/ALLAML.mat``) and then at ``<mirror>/<basename>``. Its sha256 must match
   the pinned one: a mismatch is a :class:`ValueError` naming the file and both hashes,
   and the file is neither used nor copied anywhere. Mirror files are read in place.
2. **Cache** (``cache`` directory): a previous download, checked the same way; a cached
   copy that fails the check (corrupted after download) is moved aside to
   ``<file>.corrupt`` and downloaded again.
3. **Network**: HTTPS only. The file is streamed into a temporary file inside the
   cache, its sha256 is checked, and only then is it renamed (atomically) to its final
   name. On any failure the temporary file is removed and the message says both what
   was missing from the mirror and why the download failed.

Readers never unpickle anything: ``.mat`` files go through ``scipy.io.loadmat``
(MATLAB v4/v5/v7; v7.3 = HDF5 files are refused with a clear message), text through
``numpy``/``pandas`` parsers, OpenML through ``sklearn.datasets.fetch_openml``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..fileio import new_file_mode

__all__ = [
    "DEFAULT_CACHE",
    "MAT_VARIABLE_PAIRS",
    "DownloadError",
    "datasets_needing_network",
    "download",
    "fetch_file",
    "fetch_openml_dataset",
    "find_in_mirror",
    "first_n_per_class",
    "pick_variables",
    "read_mat",
    "open_binary",
    "open_text",
    "read_numeric_text",
    "sha256_file",
    "verify_sha256",
]

#: default download cache when none is given (override with ``UFS_DATA_CACHE``).
DEFAULT_CACHE = Path(os.environ.get("UFS_DATA_CACHE", "~/.cache/ufs-bench/datasets")).expanduser()

#: (data, labels) variable-name pairs accepted in ``.mat`` files, tried in this order.
MAT_VARIABLE_PAIRS: tuple[tuple[str, str], ...] = (("X", "Y"), ("fea", "gnd"), ("M", "L"))

_TIMEOUT = 60.0  # seconds per network operation
_CHUNK = 1 << 20


class DownloadError(OSError):
    """A dataset file could not be obtained from the mirror, the cache or the network."""


# -- hashing -------------------------------------------------------------------------
def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file (streamed)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_sha256(path: str | Path, expected: str) -> Path:
    """Return ``path`` if its sha256 equals ``expected``, else raise ``ValueError``.

    The message names the file and both hashes. ``expected`` is compared
    case-insensitively; an empty ``expected`` is an error (nothing to verify against).
    """
    path = Path(path)
    if not expected:
        raise ValueError(f"no expected sha256 given for {path}")
    actual = sha256_file(path)
    if actual != expected.strip().lower():
        raise ValueError(
            f"sha256 mismatch for {path}: expected {expected.strip().lower()}, got {actual}; "
            "the file is corrupted or a different version and was not used"
        )
    return path


def _check_or_warn(path: Path, expected: str) -> Path:
    if expected:
        return verify_sha256(path, expected)
    warnings.warn(
        f"no sha256 is pinned for {path}; using it unverified (sha256 {sha256_file(path)})",
        stacklevel=3,
    )
    return path


# -- locating and downloading ------------------------------------------------------
def find_in_mirror(mirror: str | Path | None, filename: str) -> Path | None:
    """First existing ``<mirror>/<filename>`` or ``<mirror>/<basename>``, else ``None``."""
    if not mirror or not filename:
        return None
    root = Path(mirror).expanduser()
    for cand in (root / filename, root / Path(filename).name):
        if cand.is_file():
            return cand
    return None


def _require_https(url: str) -> None:
    scheme = urllib.parse.urlparse(url).scheme.lower()
    if scheme != "https":
        raise ValueError(f"refusing to download {url!r}: only https:// URLs are allowed")


def download(url: str, dest: str | Path, *, timeout: float = _TIMEOUT) -> Path:
    """Stream ``url`` (HTTPS only, also after redirects) into the file ``dest``."""
    _require_https(url)
    req = urllib.request.Request(url, headers={"User-Agent": "ufs-bench"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (https checked)
        _require_https(resp.geturl())
        with open(dest, "wb") as out:
            shutil.copyfileobj(resp, out, _CHUNK)
    return Path(dest)


def _download_verified(
    url: str, final: Path, expected: str, *, member: str = ""
) -> Path:  # temp file + sha256 + atomic rename
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    extracted: Path | None = None
    try:
        download(url, tmp)
        if member:  # the data is one member of a zip archive; verify the member
            fd, ex_name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".x")
            os.close(fd)
            extracted = Path(ex_name)
            with zipfile.ZipFile(tmp) as zf, zf.open(member) as src, open(extracted, "wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
            tmp.unlink()
            tmp, extracted = extracted, None
        _check_or_warn(tmp, expected)
        os.chmod(tmp, new_file_mode())  # not mkstemp's 0600: a shared cache stays readable
        os.replace(tmp, final)
    finally:
        for leftover in (tmp, extracted):
            if leftover is not None and leftover.exists() and leftover != final:
                leftover.unlink()
    return final


def fetch_file(
    name: str,
    *,
    filename: str,
    sha256: str,
    url: str = "",
    url_sha256: str = "",
    url_member: str = "",
    homepage: str = "",
    mirror: str | Path | None = None,
    cache: str | Path | None = None,
) -> Path:
    """Local path of the data file of dataset ``name`` (mirror → cache → HTTPS).

    ``filename``/``sha256`` describe the mirror copy; ``url`` is the public source with
    ``url_sha256`` (default ``sha256``) the hash of the downloaded file, or of the zip
    member ``url_member``. Raises ``ValueError`` on a hash mismatch and
    :class:`DownloadError` when no source provides the file.
    """
    found = find_in_mirror(mirror, filename)
    if found is not None:
        return _check_or_warn(found, sha256)

    remote_name = Path(url_member or urllib.parse.urlparse(url).path).name if url else ""
    cache_dir = Path(cache).expanduser() if cache else DEFAULT_CACHE
    expected = url_sha256 or sha256
    quarantined = ""
    if remote_name:
        cached = cache_dir / name / remote_name
        if cached.is_file():
            try:
                return _check_or_warn(cached, expected)
            except ValueError as exc:  # our own download, corrupted since: set it aside
                bad = cached.with_name(cached.name + ".corrupt")
                os.replace(cached, bad)
                quarantined = f"; the cached copy failed its check and was moved to {bad} ({exc})"
                warnings.warn(
                    f"dataset {name!r}: {quarantined[2:]}; downloading again", stacklevel=2
                )
    where = (
        f"not in mirror {Path(mirror).expanduser()} (looked for {filename!r} and "
        f"{Path(filename).name!r})"
        if mirror
        else "no mirror directory given (set mirror_dir)"
    )
    if not url:
        hint = f"; obtain it from {homepage} " if homepage else "; obtain it "
        raise DownloadError(
            f"dataset {name!r}: {where}, and no public download URL is pinned{hint}"
            f"and place it at <mirror>/{filename}"
        )
    _require_https(url)
    try:
        return _download_verified(url, cache_dir / name / remote_name, expected, member=url_member)
    except ValueError:
        raise
    except Exception as exc:  # network down, HTTP error, bad archive, ...
        raise DownloadError(
            f"dataset {name!r}: {where}{quarantined}; download from {url} failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


# -- readers -------------------------------------------------------------------------
def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(512)
    return head.startswith(b"MATLAB 7.3") or b"\x89HDF\r\n\x1a\n" in head


def pick_variables(
    path: str | Path,
    available,
    variables: Sequence[str] | None = None,
    defaults: Sequence[tuple[str, str]] = MAT_VARIABLE_PAIRS,
) -> tuple[str, str]:
    """The first ``(data, labels)`` name pair present in ``available``: ``variables``
    first, then ``defaults``; a ``ValueError`` listing the tried pairs and the file's
    variables otherwise."""
    pairs = list(dict.fromkeys([*([tuple(variables)] if variables else []), *defaults]))
    for xname, yname in pairs:
        if xname in available and yname in available:
            return xname, yname
    found = sorted(k for k in available if not k.startswith("__"))
    raise ValueError(f"{path}: none of the variable pairs {pairs} found; the file holds {found}")


def read_mat(
    path: str | Path, variables: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` from a MATLAB v4–v7 ``.mat`` file via ``scipy.io.loadmat``.

    ``variables`` = ``(data, labels)`` names, tried first; then the pairs X/Y, fea/gnd and
    M/L. ``X`` is returned samples × features (transposed when only its columns
    match the number of labels); sparse matrices are densified; ``y`` is 1-D.
    """
    from scipy.io import loadmat

    path = Path(path)
    if _is_hdf5(path):
        raise ValueError(
            f"{path} is a MATLAB v7.3 (HDF5) file, which scipy.io.loadmat cannot read; "
            "re-save it in MATLAB with save(..., '-v7') or use a v5/v7 copy"
        )
    try:
        data = loadmat(path)
    except NotImplementedError as exc:  # scipy's message for v7.3 files
        raise ValueError(f"{path} is a MATLAB v7.3 (HDF5) file, not supported: {exc}") from exc
    xname, yname = pick_variables(path, data, variables)
    X, y = data[xname], data[yname]
    if sp.issparse(X):
        X = X.toarray()
    X = np.asarray(X)
    y = np.asarray(y.toarray() if sp.issparse(y) else y).ravel()
    if X.ndim == 2 and X.shape[0] != y.size and X.shape[1] == y.size:
        X = X.T
    return X, y


def open_binary(path: Path):
    """A file for reading bytes, gunzipped when its name ends in ``.gz``."""
    return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")


def open_text(path: Path, encoding: str = "utf-8-sig"):
    """A text file for reading, gunzipped when its name ends in ``.gz`` (a UTF-8 byte
    order mark is skipped)."""
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding=encoding)
    return open(path, encoding=encoding)


def read_numeric_text(path: str | Path, *, label_column: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Whitespace-separated numeric text (optionally ``.gz``): one column is the label."""
    path = Path(path)
    with open_text(path) as fh:
        table = np.loadtxt(fh, dtype=np.float64, ndmin=2)
    y = table[:, label_column]
    X = np.delete(table, label_column, axis=1)
    return X, y


# -- subsampling ---------------------------------------------------------------------
def first_n_per_class(y, n: int, *, strict: bool = True) -> np.ndarray:
    """Indices of the first ``n`` samples of every class, in the original row order.

    This is the rule "select the first N samples in each class" (K-means UFS paper
    §V-A). With ``strict`` a class with fewer than ``n`` samples is an error (the
    paper's sample count could not be met); otherwise such a class is kept whole.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    y = np.asarray(y).ravel()
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if strict and (counts < n).any():
        short = {str(c): int(k) for c, k in zip(classes, counts, strict=True) if k < n}
        raise ValueError(f"first {n} per class impossible: classes with fewer samples {short}")
    # rank of each row within its class (0 for the first occurrence, 1 for the next, ...)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(y.size, dtype=np.int64)
    rank[order] = np.arange(y.size) - np.repeat(starts, counts)
    return np.flatnonzero(rank < n)


# -- OpenML ----------------------------------------------------------------------------
def fetch_openml_dataset(
    name: str, data_id: int, *, cache: str | Path | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of OpenML dataset ``data_id`` (network, or sklearn's cache in ``cache``)."""
    from sklearn.datasets import fetch_openml

    home = (Path(cache).expanduser() if cache else DEFAULT_CACHE) / "openml"
    try:
        bunch = fetch_openml(data_id=data_id, as_frame=False, parser="auto", data_home=str(home))
    except Exception as exc:
        raise DownloadError(
            f"dataset {name!r}: OpenML data_id={data_id} is not in the cache {home} and "
            f"could not be fetched (needs network): {type(exc).__name__}: {exc}"
        ) from exc
    X = bunch.data
    if sp.issparse(X):
        X = X.toarray()
    return np.asarray(X), np.asarray(bunch.target).ravel()


# -- which datasets need the network -------------------------------------------------
def datasets_needing_network(mirror: str | Path | None = None) -> list[str]:
    """Registered datasets that cannot be loaded without the network.

    Without ``mirror``: the static flag ``DatasetSpec.needs_network`` (sets absent from
    the shared mirror). With ``mirror``: every file-backed set whose file is not in that
    directory, plus all OpenML sets; bundled and simulated sets never need it.
    """
    from .registry import available_datasets, get_dataset

    out = []
    for name in available_datasets():
        spec = get_dataset(name)
        if mirror is None:
            if spec.needs_network:
                out.append(name)
        elif spec.source == "openml":
            out.append(name)
        elif spec.filename and find_in_mirror(mirror, spec.filename) is None:
            out.append(name)
    return out
