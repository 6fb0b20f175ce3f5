"""Files written whole or not at all, and read back with a clear word when they are not.

Below both the data layer (:mod:`ufs.datasets`) and the workflow layers
(:mod:`ufs.pipeline` and above), which share it.

* **Atomic output**: every writer goes to a temporary file in the target's directory,
  then renames it into place, so a killed job leaves the old file or none, never a
  half-written one. The file gets the mode an ordinary ``open(path, "w")`` would give
  (``0o666`` less the umask), not the ``0o600`` of :func:`tempfile.mkstemp`: results on a
  shared directory stay readable.
* **Checked input**: :func:`write_json` stores the sha256 of the payload in the file
  (key :data:`CHECKSUM_KEY`); :func:`read_json` verifies it, so a file truncated, cut by a
  full disk or edited after it was written is refused even when what is left still
  parses. Every read error (:class:`DamagedFileError`) names the file and the remedy:
  delete it and re-run, which rebuilds it. Files without the key (older results, files
  written by hand) are read as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import zipfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CHECKSUM_KEY",
    "DamagedFileError",
    "atomic_path",
    "current_umask",
    "new_file_mode",
    "read_json",
    "read_npz",
    "load_checked",
    "to_jsonable",
    "write_json",
    "write_npz",
    "write_text",
    "write_with",
    "cut_short",
]

#: key of the payload's sha256 in a JSON object written by :func:`write_json`
CHECKSUM_KEY = "_sha256"

_UMASK_LOCK = threading.Lock()


class DamagedFileError(ValueError):
    """An intermediate file is unreadable, truncated or changed after it was written."""


def damaged(path: str | Path, why: str) -> DamagedFileError:
    """The error for a damaged file: what is wrong and how to rebuild it."""
    return DamagedFileError(
        f"{path} is damaged ({why}). Delete it and re-run the workflow, which rebuilds it "
        f"(or run `snakemake --forcerun <the rule that writes it>`)."
    )


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


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as JSON, atomically; an object also records its own sha256."""
    data = to_jsonable(data)
    if isinstance(data, dict):
        data = {**data, CHECKSUM_KEY: _digest(_dumps(data))}
    with atomic_path(path) as tmp:
        tmp.write_text(_dumps(data) + "\n")


#: digests of file texts whose recorded sha256 was verified in this process: re-verifying
#: re-serializes the object in pure Python (indented JSON), 7 ms a file, and a report reads
#: each evaluation file up to five times; the key is the exact text, so any change of a
#: byte is verified again
_VERIFIED: set[bytes] = set()
_VERIFIED_MAX = 100_000


def read_json(path: str | Path) -> Any:
    """Read a JSON file; :class:`DamagedFileError` (naming the file and the remedy) when it
    does not parse or its recorded sha256 does not match what it holds. The checksum key
    is removed from the returned object."""
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError as exc:
        raise damaged(path, f"not UTF-8 text: {exc}") from None
    if not text.strip():
        raise damaged(path, "empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise damaged(path, f"not valid JSON, truncated? {exc}") from None
    if isinstance(data, dict) and CHECKSUM_KEY in data:
        recorded = data.pop(CHECKSUM_KEY)
        seen = hashlib.sha256(text.encode()).digest()
        if seen not in _VERIFIED:
            if recorded != _digest(_dumps(data)):
                raise damaged(
                    path, "its content does not match the sha256 recorded when it was written"
                )
            if len(_VERIFIED) >= _VERIFIED_MAX:
                _VERIFIED.clear()
            _VERIFIED.add(seen)
    return data


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_npz(path: str | Path, **arrays) -> None:
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def load_checked(path: str | Path, loader: Callable[[str | Path], Any]) -> Any:
    """``loader(path)`` for an ``.npz`` file (``np.load``, ``scipy.sparse.load_npz``...);
    an unreadable file (a zip member's CRC fails on a truncated or altered file) is a
    :class:`DamagedFileError` naming it; a missing one stays ``FileNotFoundError``."""
    try:
        return loader(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise damaged(path, f"{type(exc).__name__}: {exc}") from None


def _all_arrays(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def read_npz(path: str | Path, required: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file (read whole, nothing unpickled), through
    :func:`load_checked`; :class:`DamagedFileError` also when it lacks one of the
    ``required`` arrays."""
    arrays = load_checked(path, _all_arrays)
    missing = [k for k in required if k not in arrays]
    if missing:
        raise damaged(path, f"arrays {missing} missing; it holds {sorted(arrays)}")
    return arrays


def write_with(path: str | Path, writer: Callable[[Path], None]) -> None:
    """Atomic write through any ``writer(tmp_path)`` (e.g. ``fig.savefig``)."""
    with atomic_path(path) as tmp:
        writer(tmp)


#: how a file written here ends: :func:`write_json`'s text (the outer bracket at the start of
#: its own line, then a newline; a cut inside a nested list leaves an indented bracket) and a
#: zip archive's end-of-central-directory record (``np.savez`` writes no archive comment)
_JSON_END = (b"\n}\n", b"\n]\n", b"{}\n", b"[]\n")
_ZIP_END = b"PK\x05\x06"


def cut_short(path: str | Path) -> str | None:
    """Why ``path`` (a ``.json`` or ``.npz`` written by this module) was cut short, or
    ``None``: a cheap look at its last bytes only, for a check of many files before a run
    (a file truncated after it was written keeps its old mtime, so Snakemake sees nothing).
    The full check is on read (:func:`read_json`'s sha256, :func:`read_npz`'s CRCs)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 64))
            tail = fh.read()
    except OSError as exc:
        return f"unreadable: {exc}"
    if size == 0:
        return "empty"
    if path.suffix == ".json" and not tail.endswith(_JSON_END):
        return "truncated: the JSON text does not end as written"
    if path.suffix == ".npz" and (len(tail) < 22 or tail[-22:-18] != _ZIP_END):
        return "truncated: no end-of-archive record"
    return None
