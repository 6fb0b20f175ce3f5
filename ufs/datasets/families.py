"""Families of data sets: data sets drawn from one source (the same samples, or subsets of
one collection) are not independent evidence, and a view of the statistics that counts
*one per family* (:mod:`ufs.stats.views`) takes one score per family.

The registered data sets' families are listed here, beside the catalog, and a config's
data set entry may name its own (``family:``, :func:`config_families`), so that a data set
a user adds from a source the benchmark already has joins that source's family. A data set
named nowhere is a family of its own, under its own name.

This module is not imported by the data steps: a family is a fact for the statistics, not
for reading the data, and the data's code version (the lineage of every archived
evaluation, :mod:`ufs.pipeline.lineage`) hashes the modules those steps import, so naming
a family never re-plans a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REGISTERED_FAMILIES", "family_of", "config_families"]

#: registered data set → its family (the source its samples come from); a data set not
#: named here is a family of its own. ``tests/test_verdicts.py`` checks every member is
#: registered and every family has two members.
REGISTERED_FAMILIES: dict[str, str] = {
    # the 72 bone-marrow samples of Golub et al. (1999), 47 ALL / 25 AML in all three
    "allaml": "golub",
    "leukemia": "golub",
    "leuml": "golub",
    # the ORL (AT&T) faces: 40 people × 10 images; orlraws10p: 10 of them, raw pixels
    "orl": "orl",
    "orlraws10p": "orl",
    # CMU PIE faces; warppie10p: 10 people of it, warped
    "pie": "pie",
    "warppie10p": "pie",
    # AR faces; warpar10p: 10 people of it, warped
    "ar": "ar",
    "warpar10p": "ar",
    # GOLFS's Examples 1 and 2 (one generator; simulations)
    "golfs_sim1": "golfs_simulations",
    "golfs_sim2": "golfs_simulations",
}
# One family each, though registered alone today (a data set added from them belongs to it):
# - ``mfeat_fac`` is one view (the 216 profile correlations) of UCI Multiple Features, 2 000
#   handwritten digits; its other views (the pixels, Fourier and Karhunen-Loève coefficients,
#   Zernike moments, morphological features; PMLB's ``mfeat_pixel`` among them) hold the same
#   2 000 digits: give them ``family: mfeat_fac``.
# - scikit-learn's ``digits`` is the test part of UCI Optical Recognition of Handwritten
#   Digits (optdigits, 1 797 of its 5 620 images): a copy of optdigits (PMLB's ``optdigits``)
#   takes ``family: digits``.


def config_families(config: Mapping[str, Any] | None) -> dict[str, str]:
    """The ``family:`` of each data set entry of ``config`` that names one."""
    datasets = (config or {}).get("datasets") or {}
    return {
        str(name): str(entry["family"])
        for name, entry in datasets.items()
        if isinstance(entry, Mapping) and entry.get("family")
    }


def family_of(dataset: str, extra: Mapping[str, str] | None = None) -> str:
    """The family of ``dataset``: ``extra`` (a config's, :func:`config_families`) first,
    then :data:`REGISTERED_FAMILIES`, else the data set itself."""
    if extra and dataset in extra:
        return extra[dataset]
    return REGISTERED_FAMILIES.get(dataset, dataset)
