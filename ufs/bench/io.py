"""Atomic file output: write to a temporary file in the same directory, then rename.

A killed job therefore leaves either the old file or none, never a half-written one. The
file gets the mode an ordinary ``open(path, "w")`` would give (``0o666`` less the umask),
not the ``0o600`` of :func:`tempfile.mkstemp`: results on a shared directory stay readable.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "read_evaluations",
    "atomic_path",
    "current_umask",
    "new_file_mode",
    "write_json",
    "read_json",
    "write_npz",
    "write_text",
    "to_jsonable",
]


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux ≥ 4.7:
    ``/proc/self/status``); elsewhere set and restored at once under a lock."""
    try:
        with open("/proc/self/status") as fh:
            m = re.search(r"^Umask:\s*([0-7]+)$", fh.read(), re.MULTILINE)
        if m:
            return int(m.group(1), 8)
    except OSError:
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0o666`` less the umask."""
    return 0o666 & ~current_umask()


@contextmanager
def atomic_path(path: str | Path, suffix: str | None = None):
    """Yield a temporary path next to ``path``; rename it into place on success, with
    the mode of a newly created file (:func:`new_file_mode`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=suffix or path.suffix, dir=path.parent
    )
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        obj = float(obj)
    if isinstance(obj, float) and not np.isfinite(obj):
        return None if np.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def write_json(path: str | Path, data: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(to_jsonable(data), indent=1, sort_keys=True) + "\n")


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text())


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_npz(path: str | Path, **arrays) -> None:
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def write_with(path: str | Path, writer: Callable[[Path], None]) -> None:
    """Atomic write through any ``writer(tmp_path)`` (e.g. ``fig.savefig``)."""
    with atomic_path(path) as tmp:
        writer(tmp)


def read_evaluations(paths) -> list[dict[str, Any]]:
    """Every evaluation record of the given chunk files (one record per fitted task)."""
    out = []
    for p in paths:
        out.extend(read_json(p)["evaluations"])
    return out
