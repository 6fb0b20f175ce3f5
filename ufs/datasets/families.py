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
    # UCI Multiple Features: 2 000 handwritten digits, one view each (the 216 profile
    # correlations; PMLB's 240 pixel averages). Its other views (Fourier and Karhunen-Loève
    # coefficients, Zernike moments, morphological features) hold the same digits: give a
    # copy of one ``family: mfeat_fac``
    "mfeat_fac": "mfeat_fac",
    "pmlb_mfeat_pixel": "mfeat_fac",
    # Bhattacharjee et al. (2001), 203 lung tumours and normal lung: scikit-feature's 3 312
    # genes and de Souto et al.'s 1 543 (lung_discrete, 73 samples, is another set)
    "lung": "lung",
    "bhattacharjee2001_lung": "lung",
    # 20 Newsgroups: FSBC's 4-topic subset and scikit-feature's PC-vs-Mac pair (BASEHOCK and
    # RELATHE, also 20 Newsgroups pairs, would join it)
    "20ng": "20ng",
    "pcmac": "20ng",
}
# One family each, though registered alone today (a data set added from them belongs to it):
# - scikit-learn's ``digits`` is the test part of UCI Optical Recognition of Handwritten
#   Digits (optdigits, 1 797 of its 5 620 images): a copy of optdigits (PMLB's ``optdigits``)
#   takes ``family: digits``.
# - ``mnist4000`` is 4 000 MNIST digits: another MNIST subset (or Gisette, MNIST-derived)
#   takes ``family: mnist4000``; Fashion-MNIST is another image source.
# - ``tumors11`` is the study of Su et al. (2001), as is scikit-feature's Carcinom and
#   de Souto et al.'s su-2001 (neither registered): a copy takes ``family: tumors11``.
# Separate families, on purpose:
# - de Souto et al.'s (2008) collection: its eight sets here (bhattacharjee2001_lung,
#   chen2002_liver, chowdary2006, gordon2002_lung, lapointe2004_prostate, ramaswamy2001_gcm,
#   tomlins2006_prostate, yeoh2002_all) come from eight studies (other samples, other
#   arrays), one family each. A view that counts one per *collection* (one curator's
#   filtering) would merge them, with bhattacharjee2001_lung leaving ``lung``.
# - dhfr_ecfp4, fontaine_ecfp4 and m1_ecfp4 share a featurisation (ECFP_4 bits computed by
#   the UnifiedView authors) but are three compound sets (DHFR and factor Xa inhibitors,
#   M1 ligands). ACE and COX2 of that repository, from the study of DHFR, would join it.
# - madelon, arcene and dorothea were the NIPS 2003 feature selection challenge, but come
#   from unrelated sources (a generator, mass spectra, drug-discovery fingerprints).
# - extyaleb32 (Extended Yale B, 38 people) and yale (the Yale Face Database, 15 people) are
#   two face databases; msra25 and binaryalphadigits share no samples with any other set.
# - PMLB's sets here overlap no other registered set but pmlb_mfeat_pixel; its variants of
#   the same data (Musk v2 = clean2, splice = dna, chess = kr_vs_kp, Hill-Valley with noise)
#   are not registered and would join the registered one's family.


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
