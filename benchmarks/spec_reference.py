"""Write the SPEC parity reference ``tests/reference/spec_skfeature.json`` (not a test).

    pip install skfeature-chappers==1.2.1     # reference only; ufs never imports it
    python benchmarks/spec_reference.py

Two inputs, stored in the file with the reference's outputs so that the test needs neither
scikit-feature nor this script:

Both affinities are connected with a clear spectral gap (``λ_2`` well above round-off), so
that φ3 does not depend on a basis chosen inside a repeated eigenvalue.

1. ``rbf``: 30 samples x 6 features, three Gaussian blobs (seed 0); the affinity is
   scikit-feature's own default, ``sklearn.metrics.pairwise.rbf_kernel(X, gamma=1)``
   (dense, with its unit diagonal).
2. ``knn``: 45 x 7, three planted clusters in 3 of the features (seed 1); the affinity is
   ufs's 5-NN heat-kernel graph (:func:`ufs.graph.knn_graph`), given to scikit-feature
   dense as ``W``.

For each, ``skfeature.function.similarity_based.SPEC.spec`` with ``mode="raw"`` (the
scores) and ``mode="index"`` (its order) for ``style`` -1 (phi1), 0 (phi2) and k
(phi3: 3 and 5).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from ufs.graph import knn_graph

OUT = Path(__file__).resolve().parents[1] / "tests" / "reference" / "spec_skfeature.json"


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=0.6, size=(3, 6))
    rbf = np.vstack([c + rng.normal(scale=0.3, size=(10, 6)) for c in centers])
    rng = np.random.default_rng(1)
    knn = rng.normal(size=(45, 7))
    knn[:, :3] += np.repeat(np.eye(3) * 2.0, 15, axis=0)
    return {"rbf": rbf, "knn": knn}


def affinity(name: str, X: np.ndarray) -> np.ndarray:
    return rbf_kernel(X, gamma=1) if name == "rbf" else knn_graph(X, 5, weight="heat").toarray()


def main() -> None:
    from skfeature.function.similarity_based.SPEC import spec

    out = {
        "made_by": "benchmarks/spec_reference.py",
        "skfeature-chappers": importlib.metadata.version("skfeature-chappers"),
        "inputs": {},
    }
    for name, X in inputs().items():
        W = affinity(name, X)
        cases = {}
        for style in (-1, 0, 3, 5):
            cases[str(style)] = {
                "raw": spec(X, mode="raw", style=style, W=W).tolist(),
                "index": [int(i) for i in spec(X, mode="index", style=style, W=W)],
            }
        out["inputs"][name] = {"X": X.tolist(), "styles": cases}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
