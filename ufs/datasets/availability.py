"""Where each registered data set would come from on this machine, and fetching it ahead
of a run (``ufs data list`` / ``ufs data fetch``).

A data set's file is looked for in a mirror (``mirror_dir``, or ``UFS_MIRROR``), then in
the user cache (:mod:`ufs.datasets.locations`), then downloaded from its pinned public
URL and checked against its sha256 (:func:`ufs.datasets.mirror.fetch_file`). So each data
set is one of: *bundled* (scikit-learn's), *generated* (a simulation), *in mirror*,
*cached*, *downloadable* (a pinned URL), *OpenML* (fetched on first use) or *manual* (no
public download: the file must be placed by hand, where this module says).

This module is not imported by the data steps (their code version, the lineage of every
evaluation, hashes what those steps import).
"""

from __future__ import annotations

import functools
import json
import os
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import mirror as M
from .catalog import _fetch
from .registry import available_datasets, get_dataset

__all__ = [
    "DataState",
    "cache_file",
    "data_state",
    "data_states",
    "fetch",
    "default_mirror",
    "missing_states",
    "unreachable_message",
    "download_size",
    "measure_download_sizes",
    "remote_name",
    "STATES",
]

#: bytes of each pinned download, measured on the project's mirror
#: (:func:`measure_download_sizes`; a data set missing here has a size not known ahead)
SIZES_FILE = Path(__file__).with_name("download_sizes.json")

#: every state, in the order ``ufs data list`` counts them
STATES = (
    "bundled",
    "generated",
    "in mirror",
    "cached",
    "downloadable",
    "OpenML",
    "manual",
)


@dataclass(frozen=True)
class DataState:
    """One data set's state: ``state`` (one of :data:`STATES`) and what it means here (a
    path, a URL, or what to place where)."""

    name: str
    state: str
    detail: str

    @property
    def available(self) -> bool:
        """Whether a run can read it without the network."""
        return self.state in ("bundled", "generated", "in mirror", "cached")


def default_mirror(mirror: str | Path | None = None) -> str | None:
    """``mirror``, else the environment's ``UFS_MIRROR``, else None."""
    return str(mirror) if mirror else (os.environ.get("UFS_MIRROR") or None)


def remote_name(spec) -> str:
    """The name of a data set's downloaded file in its cache folder (the zip member's,
    for a file inside an archive); "" without a pinned URL."""
    return Path(spec.url_member or urllib.parse.urlparse(spec.url).path).name if spec.url else ""


def cache_file(name: str, cache: str | Path | None = None) -> Path | None:
    """Where a download of the registered data set ``name`` is kept in ``cache``
    (``None``: the data set has no pinned URL)."""
    remote = remote_name(get_dataset(name))
    cache_dir = Path(cache).expanduser() if cache else M.DEFAULT_CACHE
    return cache_dir / name / remote if remote else None


def data_state(
    name: str, *, mirror: str | Path | None = None, cache: str | Path | None = None
) -> DataState:
    """The state of the registered data set ``name`` with this ``mirror`` and ``cache``
    (files are found by name; their sha256 is checked when a run or ``fetch`` reads them)."""
    spec = get_dataset(name)
    if spec.source == "sklearn":
        return DataState(name, "bundled", "ships with scikit-learn")
    if spec.source == "simulation":
        return DataState(name, "generated", "generated from its seed")
    cache_dir = Path(cache).expanduser() if cache else M.DEFAULT_CACHE
    if spec.source == "openml":
        return DataState(
            name,
            "OpenML",
            f"OpenML data_id={spec.openml_id}, fetched on first use into {cache_dir / 'openml'}",
        )
    found = M.find_in_mirror(mirror, spec.filename) if spec.filename else None
    if found is not None:
        return DataState(name, "in mirror", str(found))
    target = cache_file(name, cache)
    if target is not None and target.is_file():
        return DataState(name, "cached", str(target))
    if spec.url:
        return DataState(name, "downloadable", spec.url)
    where = f"<mirror>/{spec.filename}" if spec.filename else "a mirror"
    home = f" from {spec.homepage}" if spec.homepage else ""
    return DataState(name, "manual", f"no public download: obtain it{home} and place it at {where}")


def data_states(
    names: Iterable[str] | None = None,
    *,
    mirror: str | Path | None = None,
    cache: str | Path | None = None,
) -> list[DataState]:
    """:func:`data_state` of each of ``names`` (default: every registered data set)."""
    return [
        data_state(n, mirror=mirror, cache=cache)
        for n in (available_datasets() if names is None else names)
    ]


def fetch(name: str, *, mirror: str | Path | None = None, cache: str | Path | None = None) -> Path:
    """Download the file of the registered data set ``name`` into ``cache`` (or find it in
    ``mirror``), sha256-checked (:func:`ufs.datasets.mirror.fetch_file`: written atomically;
    a tampered file is refused and nothing is kept). ``ValueError`` for a data set with no
    file to fetch (bundled, generated, OpenML); :class:`ufs.datasets.mirror.DownloadError`
    when no source provides it."""
    spec = get_dataset(name)
    if not spec.filename:
        raise ValueError(f"dataset {name!r} ({spec.source}) has no file to fetch")
    return _fetch(spec, mirror, cache)  # the loaders' own path: mirror → cache → HTTPS


def missing_states(
    datasets: dict[str, str],
    *,
    mirror: str | Path | None = None,
    cache: str | Path | None = None,
    done: Iterable[str] = (),
) -> dict[str, DataState]:
    """The data sets of ``datasets`` (instance → registered base) that a run cannot read
    here without the network (downloadable, OpenML or manual), each with its state (looked
    up once per base); ``done``: instances whose raw data is already on disk."""
    done = set(done)
    by_base: dict[str, DataState] = {}
    out: dict[str, DataState] = {}
    for inst, base in datasets.items():
        if inst in done:
            continue
        if base not in by_base:
            by_base[base] = data_state(base, mirror=mirror, cache=cache)
        if not by_base[base].available:
            out[inst] = by_base[base]
    return out


def unreachable_message(missing: dict[str, DataState]) -> str | None:
    """Why a run cannot start: the data sets of ``missing`` (:func:`missing_states`) that
    no source here provides (*manual*: not in the mirror nor the cache, no public
    download), each with what to do; None when every one can be fetched."""
    bad = {s.name: s for s in missing.values() if s.state == "manual"}
    if not bad:
        return None
    return (
        f"data set(s) {', '.join(sorted(bad))} cannot be obtained here: "
        + "; ".join(f"{n}: {s.detail}" for n, s in sorted(bad.items()))
        + ". Give the folder as mirror_dir (--config mirror_dir=...), or leave them out "
        "(--config offline_only=true, or only_datasets)"
    )


@functools.cache
def _sizes() -> dict[str, int]:
    return json.loads(SIZES_FILE.read_text(encoding="utf-8"))


def download_size(name: str) -> int | None:
    """Bytes of the pinned download of data set ``name`` (:data:`SIZES_FILE`); None when
    not known ahead (an OpenML set, a zip archive's member)."""
    return _sizes().get(name)


def measure_download_sizes(mirror: str | Path) -> dict[str, int]:
    """The size of each pinned download, read off a mirror: the mirror's file when the
    download is that file (same sha256), its decompressed content when the mirror holds
    the download gzipped (checked by the download's sha256); a zip member's archive is not
    measurable from the mirror and is left out. Writes nothing (``SIZES_FILE`` is this
    dictionary as JSON)."""
    import gzip
    import hashlib

    out: dict[str, int] = {}
    for name in available_datasets():
        spec = get_dataset(name)
        found = M.find_in_mirror(mirror, spec.filename) if (spec.url and spec.filename) else None
        if found is None:
            continue
        if not spec.url_sha256 or spec.url_sha256 == spec.sha256:
            out[name] = found.stat().st_size
        elif not spec.url_member and found.suffix == ".gz":
            raw = gzip.decompress(found.read_bytes())
            if hashlib.sha256(raw).hexdigest() == spec.url_sha256:
                out[name] = len(raw)
    return dict(sorted(out.items()))
