"""Completed fits of a fit job kept until its outputs are written: a killed job resumes.

A fit job (:func:`ufs.pipeline.steps.fit`) writes its two outputs once, at its end. A job
of many slow fits (DGUFS on PIE: 100 fits of up to ~7 CPU-min) that is killed — a SLURM
time limit, a pre-empted node, the end of a session — used to lose every fit it had made.
With a checkpoint folder each finished fit is stored at once (arrays, then its facts: the
facts file is the commit mark, both written atomically), and the re-run job takes the
stored fits instead of fitting again. The folder is removed once the outputs are written.

A stored fit is taken only when everything that decides it is unchanged: the data and
graph files (their bytes' sha256), the task (method, setting, parameters, h), the seed,
the budget and the method's code version. Anything else is fitted again (and overwrites
the stale entry), so a checkpoint can make a job faster but never change its result; the
resumed job's outputs equal an uninterrupted job's except for timing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.mirror import sha256_file
from ..fileio import DamagedFileError, read_json, read_npz, write_json, write_npz
from .io import CHECKPOINT_SUFFIX


def checkpoint_dir(result: str | Path) -> Path:
    """The checkpoint folder of the fit job whose array output is ``result``."""
    return Path(result).with_suffix(CHECKPOINT_SUFFIX)


def _key(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()


class FitCheckpoint:
    """The stored fits of one job in ``folder``.

    ``inputs``: what every fit of the job depends on besides its task (the data and graph
    files are hashed here; the rest — seed, budget — is given as is). Entries are keyed by
    ``(task, label)`` (:func:`ufs.pipeline.status.fit_label`).
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        files: dict[str, str | Path],
        inputs: dict[str, Any],
    ) -> None:
        self.folder = Path(folder)
        digests = {name: sha256_file(path) for name, path in sorted(files.items())}
        self._job = _key({"files": digests, **inputs})
        self.restored = 0

    def _paths(self, task: dict[str, Any], label: str) -> tuple[Path, Path, str]:
        key = _key({"job": self._job, "task": task, "label": label})
        stem = self.folder / key[:20]
        return stem.with_suffix(".npz"), stem.with_suffix(".json"), key

    def get(self, task: dict[str, Any], label: str) -> tuple[dict[str, np.ndarray], dict] | None:
        """The stored ``(arrays, record)`` of a fit, or ``None`` (none, stale or damaged)."""
        arrays_path, record_path, key = self._paths(task, label)
        if not record_path.is_file():
            return None
        try:
            record = read_json(record_path)
            if record.get("key") != key:
                return None
            arrays = read_npz(arrays_path) if record["has_arrays"] else {}
        except (DamagedFileError, FileNotFoundError, KeyError):
            return None  # a fit cut short while being stored: fitted again
        self.restored += 1
        return arrays, record["record"]

    def put(
        self, task: dict[str, Any], label: str, arrays: dict[str, np.ndarray], record: dict
    ) -> None:
        """Store one finished fit: its arrays first, then its record (the commit mark)."""
        arrays_path, record_path, key = self._paths(task, label)
        if arrays:
            write_npz(arrays_path, **arrays)
        write_json(record_path, {"key": key, "has_arrays": bool(arrays), "record": record})

    def clear(self) -> None:
        """Remove the folder (the job's outputs are written)."""
        shutil.rmtree(self.folder, ignore_errors=True)
