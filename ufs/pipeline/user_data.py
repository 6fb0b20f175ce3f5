"""A user's own data files, read in full before any job runs.

A config's ``datasets.<name>.file`` entry is checked by the plan for its shape only
(:func:`ufs.pipeline.config.build_plan`); a bad value further down the file (a NaN, a
non-numeric cell, a missing label, a single class, ``h`` beyond the non-constant features)
would otherwise surface inside the data jobs, as a traceback in a job's log, after MLflow was
set up. :func:`check_user_files` runs the data jobs' own steps
(:func:`ufs.pipeline.data_steps.download` and :func:`~ufs.pipeline.data_steps.standardize`)
on every file data set of the plan into a temporary folder and raises
:class:`UserDataError` — one message naming the config key, the file, the line and the column,
and what to do — so the workflow stops before any job, as it does for a config error.

A file that passed is recorded in ``<cache>/<name>.json`` with the file's size and
modification time and the entry's options: a later invocation re-reads the file only after it
or its entry changed, so a large file costs one read per change, not one per ``snakemake``
call.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..fileio import read_json, write_json
from .config import ConfigError
from .data_steps import download, standardize

__all__ = ["UserDataError", "check_user_files", "check_user_file"]


class UserDataError(ConfigError):
    """A user's data file that the workflow cannot use: the message says where and why."""


def _key(name: str, spec: dict[str, Any], hs: list[int]) -> dict[str, Any]:
    st = os.stat(spec["file"])
    return {
        "name": name,
        "path": os.path.abspath(spec["file"]),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "spec": json.dumps(spec, sort_keys=True, default=str),
        "h": list(hs),
    }


def check_user_file(name: str, spec: dict[str, Any], hs: list[int]) -> None:
    """Read the file data set ``name`` (``spec``: its ``file`` keys) as the data jobs do,
    validate it for the ``h`` values ``hs``, and raise :class:`UserDataError` with the
    first problem (nothing is written outside a temporary folder)."""
    source = f"dataset {name!r} ({spec['file']})"
    with tempfile.TemporaryDirectory(prefix="ufs-check-") as tmp:
        raw = Path(tmp) / "raw.npz"
        try:
            download(name, name, 0, raw, file=spec)
            standardize(
                raw, Path(tmp) / "data.npz", Path(tmp) / "data.json", h=(name, hs), source=source
            )
        except (ValueError, TypeError, OSError) as exc:
            msg = str(exc)
            where = msg if msg.startswith("config ") else f"config datasets.{name}: {msg}"
            raise UserDataError(
                f"{where}. Fix the file or its entry under `datasets:` and run again."
            ) from None


def check_user_files(plan: Any, cache: str | Path) -> list[str]:
    """Check every file data set of ``plan`` (:func:`check_user_file`) that changed since it
    last passed; the names read this time are returned."""
    read: list[str] = []
    for inst in plan.instances.values():
        if not inst.file:
            continue
        key = _key(inst.base, inst.file, list(inst.hs))
        record = Path(cache) / f"{inst.base}.json"
        try:
            if record.exists() and read_json(record) == key:
                continue
        except ValueError:  # a damaged record is a cache miss
            pass
        check_user_file(inst.base, inst.file, list(inst.hs))
        write_json(record, key)
        read.append(inst.base)
    return read
