"""Dataset registry: name → how to obtain it, its shape and where it comes from.

Sources (``DatasetSpec.source``):

* ``"sklearn"`` – bundled with scikit-learn (no network): digits, wine, breast_cancer.
* ``"simulation"`` – seeded generators (GOLFS Examples 1 and 2), with planted features.
* ``"url"`` – a public file (HTTPS URL at a pinned commit, sha256), read from a local
  mirror directory first, else downloaded into the cache (:mod:`ufs.datasets.mirror`).
* ``"openml"`` – ``sklearn.datasets.fetch_openml`` by data id (network, then cache).
* ``"manual"`` – no public file is pinned: only a mirror copy placed by hand works.

The real benchmark sets are registered in :mod:`ufs.datasets.catalog`.

:func:`load_dataset` returns a :class:`Dataset` with float64 ``X`` (n × p), labels
re-encoded to ``0..k−1`` and, for simulations, the planted ``true_features``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import check_data, check_labels
from .simulations import golfs_example

__all__ = [
    "Dataset",
    "DatasetSpec",
    "register_dataset",
    "get_dataset",
    "available_datasets",
    "load_dataset",
]


@dataclass
class Dataset:
    name: str
    X: np.ndarray
    y: np.ndarray
    true_features: np.ndarray | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return int(self.y.max()) + 1


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    source: str
    n_samples: int
    n_features: int
    n_classes: int
    loader: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray | None]]
    citation: str = ""
    papers: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    #: True when no copy is in the shared mirror (``../shared/datasets``): the set comes
    #: from the network (or a mirror/cache copy placed by hand).
    needs_network: bool = False
    # -- provenance of real datasets (empty for generated / bundled sets) --------------
    #: HTTPS URL of the public raw file (GitHub raw URL at a pinned commit).
    url: str = ""
    #: path of the file inside a mirror directory (``MANIFEST.tsv`` column ``file``).
    filename: str = ""
    #: sha256 of the mirror file (``MANIFEST.tsv``); "" = not pinned (a warning is given).
    sha256: str = ""
    #: sha256 of the file at ``url`` (or of ``url_member``) when it differs from the
    #: mirror copy (the mirror gzips text files); "" = same as ``sha256``.
    url_sha256: str = ""
    #: member of the zip archive at ``url`` that holds the data.
    url_member: str = ""
    #: file format: "mat", "txt", "csv" (text may be gzip-compressed) or "openml".
    file_format: str = ""
    #: variable names (data, labels) or a column description.
    variables: tuple[str, ...] = ()
    openml_id: int | None = None
    openml_version: int | None = None
    #: shape ``(n_samples, n_features)`` of the source before any subsampling.
    raw_shape: tuple[int, int] | None = None
    #: the paper's subsampling / preprocessing rule (text; executed via ``options``).
    subsample: str = ""
    #: landing page of the data when no raw file is pinned.
    homepage: str = ""
    notes: str = ""


_DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    if spec.name in _DATASETS:
        raise ValueError(f"dataset {spec.name!r} is already registered")
    _DATASETS[spec.name] = spec
    return spec


def get_dataset(name: str) -> DatasetSpec:
    try:
        return _DATASETS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(str(name), sorted(_DATASETS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown dataset {name!r}{hint}; available: {sorted(_DATASETS)}"
        ) from None


def available_datasets() -> list[str]:
    return sorted(_DATASETS)


def load_dataset(
    name: str, *, seed: int = 0, mirror: str | Path | None = None, cache: str | Path | None = None
) -> Dataset:
    """Materialise a registered dataset (validated, labels encoded ``0..k−1``).

    ``seed`` is used by generators; ``mirror`` is a local directory tried before the
    network; ``cache`` is where downloads are kept.
    """
    spec = get_dataset(name)
    X, y, truth = spec.loader(seed=seed, mirror=mirror, cache=cache, **spec.options)
    X = check_data(X, name=f"dataset {name!r}")
    y = check_labels(y, X.shape[0], min_classes=2)
    return Dataset(
        name=name,
        X=X,
        y=y,
        true_features=None if truth is None else np.asarray(truth, dtype=np.int64),
        meta={
            "source": spec.source,
            "citation": spec.citation,
            "seed": seed,
            "url": spec.url,
            "sha256": spec.sha256,
            "openml_id": spec.openml_id,
            "subsample": spec.subsample,
            "papers": spec.papers,
        },
    )


# -- built-in loaders ----------------------------------------------------------------
def _sklearn_loader(which: str):
    def load(seed: int = 0, mirror=None, cache=None):
        from sklearn import datasets

        X, y = getattr(datasets, f"load_{which}")(return_X_y=True)
        return X, y, None

    return load


def _golfs_loader(seed: int = 0, mirror=None, cache=None, example: int = 1):
    d = golfs_example(example, random_state=seed)
    return d.X, d.y, d.true_features


for _name, _shape, _cite in [
    ("digits", (1797, 64, 10), "UCI optdigits 8×8 (scikit-learn bundled copy)"),
    ("wine", (178, 13, 3), "UCI Wine (scikit-learn bundled copy)"),
    (
        "breast_cancer",
        (569, 30, 2),
        "UCI Breast Cancer Wisconsin Diagnostic (scikit-learn bundled copy)",
    ),
]:
    register_dataset(
        DatasetSpec(_name, "sklearn", *_shape, loader=_sklearn_loader(_name), citation=_cite)
    )

for _ex in (1, 2):
    register_dataset(
        DatasetSpec(
            f"golfs_sim{_ex}",
            "simulation",
            200,
            1000,
            5,
            loader=_golfs_loader,
            options={"example": _ex},
            citation=f"GOLFS paper §3.1 Example {_ex} (Eqs. {15 if _ex == 1 else 17}-{16 if _ex == 1 else 18})",
            papers=("golfs",),
        )
    )
