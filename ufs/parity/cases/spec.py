"""SPEC against Zhao's ``fsSpectrum.m`` (AutoUFSTool) on the stored heat-kernel graph:
style −1 (φ1), 0 (φ2) and c (φ3 with k = c), each ranked in the paper's order
(ascending φ1/φ2, descending φ3), as the reference's ``ranking_rule`` says."""

from ...methods import SPEC
from ..core import Case

STYLES = {"style-1": "phi1", "style0": "phi2", "style_c": "phi3"}


def _builder(style: str):
    def build(inputs, ref):
        est = SPEC(
            10,
            n_clusters=inputs["c"],
            style=style,
            n_neighbors=inputs["n_neighbors"],
            weight="heat",
            sigma=inputs["sigma"],
        )
        return est, {"graph": inputs["W"]}

    return build


def _scores_agree(est, inputs, ref) -> list[str]:
    import numpy as np

    ours = np.asarray(est.spec_values_)  # the paper's φ, as fsSpectrum's wFeat
    diff = float(np.max(np.abs(ours - ref.scores) / np.maximum(np.abs(ref.scores), 1e-300)))
    return [] if diff <= 1e-8 else [f"scores differ from fsSpectrum's wFeat by {diff:.3g} (rel)"]


CASES = [
    Case(
        f"spec__{tag}",
        "spec",
        _builder(style),
        exact_ranking=True,
        min_overlap=1.0,
        check=_scores_agree,
        note=f"deterministic: {style}, same ranking and fsSpectrum's scores to 1e-8 relative",
    )
    for tag, style in STYLES.items()
]
