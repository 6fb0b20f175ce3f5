"""Who a run belongs to (from ``ufs.bench.tracking``): the identity of an output
directory and of its data, and the keys of a setting and of a run (see the design notes of
:mod:`ufs.tracking.runs`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..fileio import read_json, write_json
from .client import _search


# -- identity of the data, the output directory and the run ---------------------------------
def data_sha256(path: str | Path) -> str:
    """sha256 of the arrays of a data file (``.npz``): names, dtypes, shapes and bytes in
    name order; unlike the file's bytes it does not depend on when the file was written."""
    import numpy as np

    h = hashlib.sha256()
    with np.load(path, allow_pickle=False) as f:
        for name in sorted(f.files):
            a = np.ascontiguousarray(f[name])
            h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
            h.update(a.tobytes())
    return h.hexdigest()


#: the output directory's identity file (in its ``mlflow`` folder, beside the receipts)
IDENTITY_FILE = "mlflow/output_identity.json"


def output_identity(output_dir: str | Path, adopt: str | None = None) -> str:
    """The identity of an output directory: the resolved path where its identity file was
    first written (``<output_dir>/mlflow/output_identity.json``), which moves with the
    directory. Run keys and the ``output_id`` tag derive from it, so a moved or renamed
    directory (a moved project) finds its runs as they are; a directory that
    never had the file gets its current path, the identity run keys used before the file
    existed. A copy shares its original's identity: delete the copy's file to make it a
    directory of its own in a store both log to. ``adopt``: the identity to record when
    there is no file yet (:func:`_store_identity`: a directory moved with its own store
    before identities were recorded), instead of the current path."""
    out = Path(output_dir).resolve()
    path = out / IDENTITY_FILE
    if path.exists():
        identity = read_json(path).get("identity")
        if isinstance(identity, str) and identity:
            return identity
    identity = adopt or str(out)
    write_json(
        path,
        {
            "identity": identity,
            "note": "the identity of this output directory in MLflow stores; it moves with "
            "the directory (ufs.tracking.output_identity)",
        },
    )
    return identity


def _store_identity(client, exp_id: str, out: Path) -> str | None:
    """For a directory with no identity file yet, logging into its own store: the
    ``output_dir`` every run of the store was logged from, when there is exactly one and
    it no longer exists (a directory moved, store and all, before identities were
    recorded: its runs are found instead of logged again beside themselves; a directory
    that exists is another one logging into this store). ``None`` otherwise."""
    if (out / IDENTITY_FILE).exists():
        return None
    dirs = {r.data.tags.get("output_dir") for r in _search(client, exp_id, "")}
    dirs.discard(None)
    if len(dirs) != 1:
        return None
    (old,) = dirs
    return old if old != str(out) and not Path(old).exists() else None


def output_id(output_dir: str | Path) -> str:
    """Short id of an output directory (of its :func:`output_identity`), a run tag."""
    return _id_of(output_identity(output_dir))


def _id_of(identity: str) -> str:
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def setting_key(
    dataset: str, method: str, pid: str, h_label: str, restarts: int, seed: int, nmi_average: str
) -> str:
    """The (dataset, method, setting, h, protocol) part of a run key: the same in every
    output directory (a run tag, ``setting_key``)."""
    blob = json.dumps([dataset, method, pid, h_label, restarts, seed, nmi_average])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_key(
    dataset: str,
    method: str,
    pid: str,
    h_label: str,
    restarts: int,
    seed: int,
    nmi_average: str,
    *,
    output_dir: str | Path,
    data_sha256: str,
) -> str:
    """A run's identity: the setting (:func:`setting_key`) in one output directory (its
    :func:`output_identity`) on one dataset content (:func:`data_sha256`)."""
    skey = setting_key(dataset, method, pid, h_label, restarts, seed, nmi_average)
    return _run_key_of(skey, output_identity(output_dir), data_sha256)


def _run_key_of(skey: str, identity: str, data_hash: str) -> str:
    """:func:`run_key` from the setting key and the output directory's identity."""
    blob = json.dumps([identity, data_hash, skey])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
