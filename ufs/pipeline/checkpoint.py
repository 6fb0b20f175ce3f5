"""Completed fits of a fit job kept until its outputs are written: a killed job resumes.

A fit job (:func:`ufs.pipeline.steps.fit`) writes its two outputs once, at its end. A job
of many slow fits (DGUFS on PIE: 100 fits of up to ~7 CPU-min) that is killed — a SLURM
time limit, a pre-empted node, the end of a session — used to lose every fit it had made.
With a checkpoint folder the finished fits are stored as soon as they add up to 2 CPU-s
(:data:`STORE_EVERY_CPU_SECONDS`; each fit its own entry: arrays, then its facts, the facts
file being the commit mark, both written atomically), and the re-run job takes the stored
fits instead of fitting again. The folder is removed once the outputs are written.

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


#: fits are stored in batches of at least this much CPU time: a killed job loses the fit it
#: was making and at most about this much of finished ones, and a job of millisecond fits
#: stores (almost) nothing
STORE_EVERY_CPU_SECONDS = 2.0


class FitCheckpoint:
    """The stored fits of one job in ``folder``.

    ``files``: the data and graph files every fit of the job reads (their bytes' sha256 is
    part of each entry's key); ``inputs``: the rest every fit depends on besides its task
    (seed, budget). Entries are keyed by ``(task, label)``
    (:func:`ufs.pipeline.status.fit_label`). Finished fits are held until they add up to
    ``every`` CPU seconds (default :data:`STORE_EVERY_CPU_SECONDS`), then stored, one entry
    each; nothing is hashed or written for a job that never stores or finds an entry.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        files: dict[str, str | Path],
        inputs: dict[str, Any],
        every: float | None = None,
    ) -> None:
        self.folder = Path(folder)
        self._files, self._inputs = dict(files), dict(inputs)
        self._job: str | None = None
        self.every = STORE_EVERY_CPU_SECONDS if every is None else every
        self._pending: list[tuple[dict[str, Any], str, dict[str, np.ndarray], dict]] = []
        self._pending_cpu = 0.0
        self.restored = 0

    def _job_key(self) -> str:
        if self._job is None:
            digests = {name: sha256_file(path) for name, path in sorted(self._files.items())}
            self._job = _key({"files": digests, **self._inputs})
        return self._job

    def _paths(self, task: dict[str, Any], label: str) -> tuple[Path, Path, str]:
        key = _key({"job": self._job_key(), "task": task, "label": label})
        stem = self.folder / key[:20]
        return stem.with_suffix(".npz"), stem.with_suffix(".json"), key

    def get(self, task: dict[str, Any], label: str) -> tuple[dict[str, np.ndarray], dict] | None:
        """The stored ``(arrays, record)`` of a fit, or ``None`` (none, stale or damaged)."""
        if not self.folder.is_dir():
            return None
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
        self,
        task: dict[str, Any],
        label: str,
        arrays: dict[str, np.ndarray],
        record: dict,
        cpu_seconds: float,
    ) -> None:
        """Keep one finished fit; store the fits kept so far once they took ``every``."""
        self._pending.append((task, label, arrays, record))
        self._pending_cpu += cpu_seconds
        if self._pending_cpu >= self.every:
            for entry in self._pending:
                self._store(*entry)
            self._pending, self._pending_cpu = [], 0.0

    def _store(self, task, label, arrays, record) -> None:
        """One fit: its arrays first, then its record (the commit mark)."""
        arrays_path, record_path, key = self._paths(task, label)
        if arrays:
            write_npz(arrays_path, **arrays)
        write_json(record_path, {"key": key, "has_arrays": bool(arrays), "record": record})

    def clear(self) -> None:
        """Remove the folder (the job's outputs are written)."""
        self._pending, self._pending_cpu = [], 0.0
        shutil.rmtree(self.folder, ignore_errors=True)
