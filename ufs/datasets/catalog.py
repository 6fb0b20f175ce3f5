"""Registry entries of the real datasets used by the five papers.

Papers (``DatasetSpec.papers``): ``dgufs`` (Table 1), ``spcafs`` (Table 2), ``fsbc``
(Table 1), ``kmeans_ufs`` (Table II), ``golfs`` (§4). Sets registered with
``papers=()`` are further public benchmarks of the shared mirror that none of the five
papers uses.

Three kinds of entry (``DatasetSpec.source``):

* ``"url"``: a public file at a pinned commit of a GitHub repository
  (``https://raw.githubusercontent.com/<repo>/<commit>/<path>``) with its sha256 from
  ``shared/datasets/MANIFEST.tsv``. The mirror copy (``mirror_dir``) is used first,
  else the file is downloaded into the cache (:func:`ufs.datasets.mirror.fetch_file`).
  ``lung`` (203 × 3312) is of this kind but no copy or hash is pinned, so it needs the
  network and is used with a warning giving the hash of whatever was fetched.
* ``"openml"``: ``sklearn.datasets.fetch_openml(data_id=...)`` (network; kept in the
  cache). The data ids come from the issue and are **unconfirmed** (no network here):
  each loader checks the fetched shape and class count against the paper and raises a
  ``ValueError`` naming the id if they differ. ``fetch_openml`` takes either a data id
  or a name + version, so ``openml_version`` is recorded only.
* ``"manual"``: no public copy is known (20NG): only a copy placed by hand in the
  mirror works; otherwise the error says where to get it. FSBC's Mnist4000 was of this
  kind until a public 4000-digit copy was pinned (``ma-xu/L21FS``; which 4000 digits the
  paper drew is stated nowhere, so that copy may not be the paper's).

Beyond the five papers' sets: the mirror's ``PMLB/`` folder (Penn Machine Learning
Benchmarks; its files are Git LFS objects, downloaded from ``media.githubusercontent.com``,
:func:`lfs_media_url`, whose sha256 is the LFS oid) and its ``Extended/`` folder (28 sets
from six repositories). Their files are read by :mod:`ufs.datasets.readers` (PMLB's
``.tsv``, de Souto et al.'s genes × samples tables, UnifiedView's CSV files, a ``.mat``
matrix with the label last, sktime's ``.ts``, an R data frame through
:mod:`ufs.datasets.rdata`) or, for ``.mat`` files with a variable pair, as the other
``.mat`` sets. Where the mirror holds a text file gzip-compressed, ``sha256`` is the mirror
copy's and ``url_sha256`` the (plain) download's, as for mfeat-fac; the readers take
either. ACS-F1's two files are in its ``options['files']``, like Fashion-MNIST's.
Families (the same samples in two entries) are in :mod:`ufs.datasets.families`.

Every loader checks the raw shape/class count before subsampling (a wrong file is an
error, not a silent benchmark on other data), returns features as stored (converted to
float64 by :func:`ufs.datasets.load_dataset`, which also re-encodes labels to 0..k−1).

Subsampling rules stated by a paper are in ``options`` (executed) and ``subsample``
(text): K-means UFS §V-A takes the first 500 (HARS), 300 (Fashion-MNIST), 500 (Fabert)
and 700 (Dilbert) samples of each class (:func:`ufs.datasets.mirror.first_n_per_class`,
rows kept in file order).

BBC (GOLFS §4, Example 3) — the paper says: 200 reports, five topics, words segmented
and weighted by TF-IDF, giving ``n = 200``, ``p = 2057``. It does not say which 200 of
the 2225 articles, nor the tokenizer or vocabulary rule. Our choices (options of the
``bbc`` entry): the first 200 articles in file order (``n_docs=200``; all five topics
occur: 51 business, 48 sport, 41 politics, 31 entertainment, 29 tech);
``sklearn.feature_extraction.text.TfidfVectorizer`` with its defaults (lower-casing,
tokens of ≥ 2 word characters, no stop-word list — the paper relies on TF-IDF itself to
down-weight stop words —, smooth idf, l2-normalised rows) and ``max_features=2057``,
which keeps the 2057 terms most frequent over the 200 articles so that ``p`` equals the
paper's. No plain document-frequency cut reproduces 2057 exactly (``min_df=4`` gives
2076 terms), so the vocabulary size is matched directly.

Size (~1 600 lines): the registry of benchmark data sets, one entry (loader, shape,
source, citation) per data set — a table, not logic; each loader is hashed separately
into its data set's lineage (:func:`ufs.pipeline.lineage.dataset_code`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .idx import read_idx
from .mirror import (
    fetch_file,
    fetch_openml_dataset,
    first_n_per_class,
    read_mat,
    read_numeric_text,
)
from .readers import (
    read_csv_label_last,
    read_gene_table,
    read_mat_label_last,
    read_pmlb_tsv,
    read_rda_frame,
    read_ts,
)
from .registry import DatasetSpec, get_dataset, register_dataset

__all__ = ["CATALOG", "lfs_media_url", "raw_github_url"]

_SKF = ("jundongl/scikit-feature", "48cffad4e88ff4b9d2f1c7baffb314d1b3303792")
_SKF_CITE = "scikit-feature repository: J. Li et al., Feature selection: a data perspective, ACM CSUR 50(6), 2017"


def raw_github_url(repo: str, commit: str, path: str) -> str:
    """HTTPS URL of ``path`` in GitHub repository ``repo`` at ``commit``."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


# -- loaders ---------------------------------------------------------------------------
def _check_raw(spec: DatasetSpec, X: np.ndarray, y: np.ndarray, path: Any) -> None:
    k = np.unique(y).size
    if spec.raw_shape is not None and tuple(X.shape) != tuple(spec.raw_shape):
        raise ValueError(
            f"dataset {spec.name!r}: {path} holds a {X.shape[0]} × {X.shape[1]} matrix; "
            f"expected {spec.raw_shape[0]} × {spec.raw_shape[1]} (wrong file?)"
        )
    if k != spec.n_classes:
        raise ValueError(
            f"dataset {spec.name!r}: {path} has {k} classes; expected {spec.n_classes}"
        )


def _subsample(X: np.ndarray, y: np.ndarray, per_class: int | None):
    if per_class is None:
        return X, y
    idx = first_n_per_class(y, per_class)
    return X[idx], y[idx]


def _fetch(spec: DatasetSpec, mirror, cache) -> Path:
    return fetch_file(
        spec.name,
        filename=spec.filename,
        sha256=spec.sha256,
        url=spec.url,
        url_sha256=spec.url_sha256,
        url_member=spec.url_member,
        homepage=spec.homepage,
        mirror=mirror,
        cache=cache,
    )


def _file_loader(name: str):
    def load(seed: int = 0, mirror=None, cache=None, per_class: int | None = None):
        spec = get_dataset(name)
        path = _fetch(spec, mirror, cache)
        if spec.file_format == "mat":
            X, y = read_mat(path, spec.variables or None)
        elif spec.file_format == "txt":
            X, y = read_numeric_text(path, label_column=0)
        else:  # pragma: no cover - catalog error
            raise ValueError(f"dataset {name!r}: unknown file format {spec.file_format!r}")
        _check_raw(spec, X, y, path)
        X, y = _subsample(X, y, per_class)
        return X, y, None

    load.__name__ = f"load_{name}"
    return load


def _bbc_loader(
    seed: int = 0,
    mirror=None,
    cache=None,
    n_docs: int | None = 200,
    per_class: int | None = None,
    max_features: int | None = 2057,
    min_df: int | float = 1,
    stop_words: str | None = None,
):
    """BBC news → TF-IDF (GOLFS §4 Example 3); see the module docstring for choices."""
    import pandas as pd
    from sklearn.feature_extraction.text import TfidfVectorizer

    spec = get_dataset("bbc")
    path = _fetch(spec, mirror, cache)
    df = pd.read_csv(path, compression="infer", dtype=str, keep_default_na=False)
    if list(df.columns) != ["category", "text"] or len(df) != 2225:
        raise ValueError(
            f"dataset 'bbc': {path} has columns {list(df.columns)} and {len(df)} rows; "
            "expected columns ['category', 'text'] and 2225 rows"
        )
    y = df["category"].to_numpy()
    if np.unique(y).size != spec.n_classes:
        raise ValueError(f"dataset 'bbc': {path} has {np.unique(y).size} topics; expected 5")
    idx = np.arange(len(df))
    if per_class is not None:
        idx = first_n_per_class(y, per_class)
    if n_docs is not None:
        idx = idx[:n_docs]
    vec = TfidfVectorizer(max_features=max_features, min_df=min_df, stop_words=stop_words)
    X = vec.fit_transform(df["text"].to_numpy()[idx]).toarray()
    return X, y[idx], None


def _openml_loader(name: str):
    def load(seed: int = 0, mirror=None, cache=None, per_class: int | None = None):
        spec = get_dataset(name)
        X, y = fetch_openml_dataset(name, spec.openml_id, cache=cache)
        try:
            _check_raw(spec, X, y, f"OpenML data_id={spec.openml_id}")
        except ValueError as exc:
            raise ValueError(f"{exc} — the OpenML id is unconfirmed; check it") from None
        X, y = _subsample(X, y, per_class)
        return X, y, None

    load.__name__ = f"load_{name}"
    return load


# -- entries ---------------------------------------------------------------------------
def _url_entry(
    name: str,
    filename: str,
    sha256: str,
    shape: tuple[int, int, int],
    variables: tuple[str, ...],
    repo_commit: tuple[str, str],
    path: str,
    citation: str,
    papers: tuple[str, ...] = (),
    notes: str = "",
    **extra: Any,
) -> DatasetSpec:
    n, p, k = shape
    fmt = "mat" if filename.endswith(".mat") else "txt"
    return DatasetSpec(
        name=name,
        source="url",
        n_samples=n,
        n_features=p,
        n_classes=k,
        loader=_file_loader(name),
        citation=citation,
        papers=papers,
        url=raw_github_url(*repo_commit, path),
        filename=filename,
        sha256=sha256,
        file_format=fmt,
        variables=variables,
        raw_shape=(n, p),
        notes=notes,
        **extra,
    )


_EXTRA = "not used by the five papers; scikit-feature benchmark kept for further experiments"

CATALOG: list[DatasetSpec] = [
    # -- DGUFS Table 1 -----------------------------------------------------------------
    _url_entry(
        "allaml",
        "ALLAML/ALLAML.mat",
        "068afe0fe1021932e1e7d801294c267de8aeaa9d41899acfac024e72b0d44c1e",
        (72, 7129, 2),
        ("X", "Y"),
        _SKF,
        "skfeature/data/ALLAML.mat",
        "ALL/AML leukaemia: T. Golub et al., Science 286, 1999 (DGUFS cites Fodor 1997); "
        + _SKF_CITE,
        ("dgufs",),
    ),
    _url_entry(
        "prostate_ge",
        "Prostate_GE/Prostate-GE.mat",
        "050b598534dbc662f23e30f39b41354b61d02ab8567837bcf9b1091c1c636ab4",
        (102, 5966, 2),
        ("X", "Y"),
        _SKF,
        "skfeature/data/Prostate-GE.mat",
        "D. Singh et al., Cancer Cell 1(2), 2002; " + _SKF_CITE,
        ("dgufs",),
    ),
    _url_entry(
        "lung",
        "lung/lung.mat",
        "",
        (203, 3312, 5),
        ("X", "Y"),
        _SKF,
        "skfeature/data/lung.mat",
        "A. Bhattacharjee et al., PNAS 98(24), 2001; " + _SKF_CITE,
        ("dgufs",),
        "not in the shared mirror; the scikit-feature path is assumed from its dataset list "
        "(unverified) and no sha256 is pinned: a fetched copy is used with a warning giving "
        "its hash; its shape (203 × 3312, 5 classes) is checked. Not lung_discrete.",
        needs_network=True,
    ),
    _url_entry(
        "umist",
        "UMIST/umist.mat",
        "b89f79abb84d5825cd3008f8ee7537582a5c0ab268781c26d7227b11286d4d11",
        (575, 644, 20),
        ("fea", "gnd"),
        ("anony259106/icml2024", "b3e3f2e6382b2640dff64f08f1332f3900c494d0"),
        "data/umist.mat",
        "D. Graham, N. Allinson, Characterising virtual eigensignatures for general purpose "
        "face recognition, 1998",
        ("dgufs",),
        "uint8 pixels, variables fea/gnd (+ scalar cate_flag)",
    ),
    _url_entry(
        "pixraw10p",
        "pixraw10P/pixraw10P.mat",
        "aa4b474244ae847dc2efdc868c0ff58fc3748a830c2ffdf760a1697cf72088f8",
        (100, 10000, 10),
        ("X", "Y"),
        _SKF,
        "skfeature/data/pixraw10P.mat",
        "PIX 10P faces, http://peipa.essex.ac.uk/ipa/pix/faces/ (DGUFS footnote 5); " + _SKF_CITE,
        ("dgufs",),
    ),
    _url_entry(
        "warppie10p",
        "warpPIE10P/warpPIE10P.mat",
        "0d22b0e4fe224ea7347ae266370b6eb0d724d5fd0ad7da71261a58c24e08c3c2",
        (210, 2420, 10),
        ("X", "Y"),
        _SKF,
        "skfeature/data/warpPIE10P.mat",
        "PIE 10P: R. Gross et al., Multi-PIE, 2008 (as cited by DGUFS); " + _SKF_CITE,
        ("dgufs",),
        "uint8 0-255 (the icml2024 copy rescaled to [0,1] was not kept)",
    ),
    # -- FSBC Table 1 (+ GOLFS Example 4 for Yale) --------------------------------------
    _url_entry(
        "yale",
        "Yale/Yale.mat",
        "cccd29abd2c520dd5cc8ff7645b422c2bdadd59406a6b6a0239143d9d44afcf3",
        (165, 1024, 15),
        ("X", "Y"),
        _SKF,
        "skfeature/data/Yale.mat",
        "Yale faces 32×32: D. Cai et al., CVPR 2007 (FSBC [47]); "
        "http://www.cad.zju.edu.cn/home/dengcai/Data/FaceData.html (GOLFS footnote 2)",
        ("fsbc", "golfs"),
        "= Yale_32x32 (identical X, Y to other copies, see MANIFEST)",
    ),
    _url_entry(
        "orl",
        "ORL/ORL.mat",
        "e257ec36002e48688ed7f3b9fda13f479f2fd98864fa0672d1353eda1912b189",
        (400, 1024, 40),
        ("X", "Y"),
        _SKF,
        "skfeature/data/ORL.mat",
        "F. Samaria, A. Harter, IEEE WACV 1994 (FSBC [51]); " + _SKF_CITE,
        ("fsbc",),
        "32×32 ORL",
    ),
    _url_entry(
        "jaffe",
        "JAFFE/jaffe676.mat",
        "b85532aafcadcf2c973e5089b78a3476696fdf7739d0d30aa5672f94aa9a64b3",
        (213, 676, 10),
        ("fea", "gnd"),
        ("ouharu/datasets", "9498b2dd5abbed49584704fa67136f3da7c9347f"),
        "jaffe676.mat",
        "M. Lyons, J. Budynek, S. Akamatsu, IEEE TPAMI 21(12), 1999 (FSBC [49])",
        ("fsbc",),
        "26×26 images",
    ),
    _url_entry(
        "mfeat_fac",
        "mfeat-fac/mfeat-fac.txt.gz",
        "74ab65acf40fc0eb0407d8b1b6b2cb459dbfcbfc07c52fb6f4f1a14df75aff45",
        (2000, 216, 10),
        ("column 1 = label 1..10", "columns 2-217 = features"),
        ("Shihab-Shahriar/UCI_Dataset", "db9e6a2cc0a7c2eaf35a15fd306a5c3f0cba0329"),
        "mfeat-fac.txt",
        "UCI Multiple Features (R. Duin), 'fac' = 216 profile correlations; FSBC 'UCI Digit' "
        "cites P. Zhou et al., KBS 174, 2019 [52]",
        ("fsbc",),
        "mirror copy is the gzip of the source text file; the download is the plain text",
        url_sha256="6adcd4feae222727dbbc1f3252300e2456fbe4f60e9c46c374e41fca950ab71a",
    ),
    # -- SPCAFS Table 2 ---------------------------------------------------------------------
    _url_entry(
        "pie",
        "PIE/PIE.mat",
        "e8e4e447d60e783a5257b51dca738725d39361b7633be9edab7ee643c1c8f5b1",
        (2856, 1024, 68),
        ("fea", "gnd"),
        ("XiaoZhu-05/RGD-NMF", "23567eeef0121240b38b914ebb234a9e30fa37a9"),
        "PIE.mat",
        "CMU PIE: T. Sim, S. Baker, M. Bsat, IEEE TPAMI 25(12), 2003 (32×32 subset)",
        ("spcafs",),
        "NOT the variant of SPCAFS Table 2 (1166 × 1024, 53 classes): this is the 2856 × "
        "1024, 68-subject subset; the paper's subset is not public",
    ),
    _url_entry(
        "ar",
        "AR/AR.mat",
        "2d1065a2570084bedab117296f271346ac7ab5e2eb3d0b339a6061e86c1aeac0",
        (1680, 2000, 120),
        ("fea", "gnd"),
        ("XiaoZhu-05/RGD-NMF", "23567eeef0121240b38b914ebb234a9e30fa37a9"),
        "AR.mat",
        "AR faces: A. Martinez, R. Benavente, CVC Tech. Rep. 24, 1998",
        ("spcafs",),
        "NOT the variant of SPCAFS Table 2 (2600 × 2200, 100 classes): this is 1680 × 2000, "
        "120 classes",
    ),
    _url_entry(
        "srbct",
        "SRBCT/SRBCTML.mat",
        "616e16a7b37bdebebb3e6deff28ae04ae985afae5428c4542f1ce0bc1a81cccc",
        (83, 2308, 4),
        ("M", "L"),
        ("JIEdaydayUp/datasets", "ddbba49a0af23623c5ec407c0256d441898b4ebb"),
        "SRBCTML.mat",
        "J. Khan et al., Nature Medicine 7(6), 2001",
        ("spcafs",),
        "variables M (data) / L (labels)",
    ),
    _url_entry(
        "palmdata25",
        "PalmData25/Palm.mat",
        "3b47e9294036b9b31c9eb2a6e55173725548bdf3a058cde63307bb7c6f49a431",
        (2000, 256, 100),
        ("X", "Y"),
        ("LCHJ/Phd-Advisor-pytorch", "3fb07fc3d5114bd8f2c65a2b53a96c0e96c4a649"),
        "datasets/Palm.mat",
        "PalmData25 (100 palms × 20 images, 16×16), SPCAFS Table 2; no citation given",
        ("spcafs",),
        "named Palm.mat at the source (no file named PalmData25*.mat is public); shape and "
        "class count match SPCAFS Table 2; only one public copy, not cross-checked",
    ),
    _url_entry(
        "imm40",
        "Imm40/imm40.mat",
        "b896251f5f72374e65835f755eda826be596aa8e5553388e3ce488c47a1dfd87",
        (240, 1024, 40),
        ("X", "Y"),
        ("yanniangu/CDFS", "e67f5df16cc272fb63944585277b6086be5b48d1"),
        "datasets/imm40.mat",
        "IMM face database: M. Nordstrøm, M. Larsen, J. Sierakowski, M. Stegmann, DTU 2004 "
        "(32×32 version, SPCAFS Table 2)",
        ("spcafs",),
        "rescaled 32×32 faces, 6 per person; same X and labels as "
        "LCHJ/Phd-Advisor-pytorch@3fb07fc3 datasets/imm40.mat (checked by the mirror's curator)",
    ),
    _url_entry(
        "leuml",
        "LEUML/LEUML.mat",
        "b2deec6e22374874ef08dcb4ede0656f8ac2130913ddf885d24b670d29b00883",
        (72, 3571, 2),
        ("M", "L"),
        ("JIEdaydayUp/datasets", "ddbba49a0af23623c5ec407c0256d441898b4ebb"),
        "LEUML.mat",
        "T. Golub et al., Science 286, 1999 (3571-gene preprocessing of S. Dudoit et al., "
        "JASA 97, 2002)",
        ("spcafs",),
        "variables M (data) / L (labels)",
    ),
    # -- further scikit-feature / mirror benchmarks (no paper) ------------------------------
    _url_entry(
        "coil20",
        "COIL20/COIL20.mat",
        "4595ebdda07f47b0eb014fcfaddc22b452f9aed9c1d9261a0d5bc336c1ee1344",
        (1440, 1024, 20),
        ("X", "Y"),
        _SKF,
        "skfeature/data/COIL20.mat",
        "S. Nene, S. Nayar, H. Murase, COIL-20, Tech. Rep. CUCS-005-96, 1996; " + _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "warpar10p",
        "warpAR10P/warpAR10P.mat",
        "92b5f7e72b5715ada8f2df16e6d8e5effd8e0034a53a656ed9ef76e3f727d413",
        (130, 2400, 10),
        ("X", "Y"),
        _SKF,
        "skfeature/data/warpAR10P.mat",
        _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "orlraws10p",
        "orlraws10P/orlraws10P.mat",
        "6ffa58759c5636f4ce311d23e44ef8de9f39bbb844902154c0cc5daac71226d6",
        (100, 10304, 10),
        ("X", "Y"),
        _SKF,
        "skfeature/data/orlraws10P.mat",
        _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "tox_171",
        "TOX_171/TOX-171.mat",
        "f52f57e61775b7830c84750456d7fadfd220d1cc8eed26419c3390eb9216cc84",
        (171, 5748, 4),
        ("X", "Y"),
        _SKF,
        "skfeature/data/TOX-171.mat",
        _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "glioma",
        "GLIOMA/GLIOMA.mat",
        "c31cd32edd770c7a102729839e670e588bc959a591e0eae5a0676c9ca11d4c4f",
        (50, 4434, 4),
        ("X", "Y"),
        _SKF,
        "skfeature/data/GLIOMA.mat",
        "C. Nutt et al., Cancer Research 63(7), 2003; " + _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "colon",
        "colon/colon.mat",
        "ffcdeba03eb67cec403fa1dc9f827c22a6e2c57786bf3e01dfe1b4b3e25e0a2f",
        (62, 2000, 2),
        ("X", "Y"),
        _SKF,
        "skfeature/data/colon.mat",
        "U. Alon et al., PNAS 96(12), 1999; " + _SKF_CITE,
        notes=_EXTRA + "; labels -1/1",
    ),
    _url_entry(
        "leukemia",
        "leukemia/leukemia.mat",
        "eb92382fb77c968864cb0a92a2c77acde7f88ba7fe5fd5a64b98184e3a05269d",
        (72, 7070, 2),
        ("X", "Y"),
        _SKF,
        "skfeature/data/leukemia.mat",
        _SKF_CITE,
        notes=_EXTRA + "; labels -1/1",
    ),
    _url_entry(
        "isolet",
        "Isolet/Isolet.mat",
        "ea73c69b1342a7def8199458e53a70307a83d557eceb2579863dda57c3ccd2b1",
        (1560, 617, 26),
        ("X", "Y"),
        _SKF,
        "skfeature/data/Isolet.mat",
        "UCI ISOLET (R. Cole, M. Fanty); " + _SKF_CITE,
        notes=_EXTRA + "; 1560-sample subset, not the full 7797",
    ),
    _url_entry(
        "lung_discrete",
        "lung_discrete/lung_small.mat",
        "93c6a65eb1f6f9f95ac897010c337254a57c57e7f8c0c9a7963a0e03de8233f4",
        (73, 325, 7),
        ("X", "Y"),
        _SKF,
        "skfeature/data/lung_small.mat",
        _SKF_CITE,
        notes=_EXTRA + "; scikit-feature lung_small.mat = lung_discrete, NOT lung",
    ),
    _url_entry(
        "nci9",
        "nci9/nci9.mat",
        "e336aa43eaf3103803252604375a89141043994a54f93222f7ccc12b5b910789",
        (60, 9712, 9),
        ("X", "Y"),
        _SKF,
        "skfeature/data/nci9.mat",
        _SKF_CITE,
        notes=_EXTRA,
    ),
    _url_entry(
        "usps",
        "USPS/USPS.mat",
        "9f09eec7eba5872888b3e78373595cd7fd97d32e28b996be8c65eab068c874f2",
        (11000, 256, 10),
        ("fea", "gnd"),
        ("se2/cis602-01-a3", "009320fc3ab432b50d1f578c5a714fc48dd2f7d3"),
        "USPS.mat",
        "J. Hull, IEEE TPAMI 16(5), 1994",
        notes="not used by the five papers; 11000-sample version (1100 per digit)",
    ),
    # -- GOLFS §4 Example 3 ----------------------------------------------------------------
    DatasetSpec(
        name="bbc",
        source="url",
        n_samples=200,
        n_features=2057,
        n_classes=5,
        loader=_bbc_loader,
        citation="D. Greene, P. Cunningham, ICML 2006 (BBC news); GOLFS footnote 1: "
        "https://storage.googleapis.com/laurencemoroney-blog.appspot.com/bbc-text.csv",
        papers=("golfs",),
        options={"n_docs": 200, "max_features": 2057},
        url=raw_github_url(
            "MarehanRefaat/Text-Classification-BBC-Data-Set",
            "005602a91be36c506081bceedd9f32e61afa7aff",
            "bbc-text.zip",
        ),
        filename="BBC/bbc-text.csv.gz",
        sha256="93ce35178a79159f204f1e6df6db53679841a40777d384b3d49fabde73e24be3",
        url_sha256="fdaee0f7451cd8db2709d00e992886fe1c387ee332b8c7b7c1554ed3d3e3382e",
        url_member="bbc-text.csv",
        file_format="csv",
        variables=("category", "text"),
        subsample="first 200 articles in file order (paper: n=200, which ones unstated); "
        "TF-IDF with the 2057 most frequent terms (paper: p=2057)",
        notes="2225 raw articles (510 business, 511 sport, 417 politics, 386 entertainment, "
        "401 tech); mirror copy is the gzip of bbc-text.csv from bbc-text.zip (the zip was "
        "deleted in a later commit of that repo; the pinned commit still has it)",
    ),
]

# -- K-means UFS Table II: OpenML (network only) -----------------------------------------
_KM = ("kmeans_ufs",)
for _name, _id, _ver, _raw, _k, _per, _cite, _note in [
    (
        "micromass",
        1514,
        1,
        (360, 1300),
        10,
        None,
        "P. Mahé et al., Automatic identification of mixed bacterial species fingerprints "
        "in a MALDI-TOF mass-spectrum, Bioinformatics 30(9), 2014 (UCI MicroMass)",
        "OpenML micro-mass (id 1514, unconfirmed); Table II prints 1300 samples × 360 "
        "features, which we read as transposed (360 spectra × 1300 m/z bins, 10 classes)",
    ),
    (
        "hars",
        1478,
        1,
        (10299, 561),
        6,
        500,
        "D. Anguita et al., A public domain dataset for human activity recognition using "
        "smartphones, ESANN 2013 (UCI HAR)",
        "OpenML har (id 1478, unconfirmed); paper: first 500 per class → 3000",
    ),
    (
        "gina",
        1042,
        1,
        (3468, 784),
        10,
        None,
        "I. Guyon et al., Agnostic learning vs. prior knowledge challenge, IJCNN 2007",
        "OpenML gina_prior (id 1042, unconfirmed; gina_agnostic is id 1038, 970 features, "
        "2 classes, which does not fit Table II's 784 features and 10 classes)",
    ),
    (
        "fabert",
        41164,
        1,
        (8237, 800),
        7,
        500,
        "I. Guyon et al., Analysis of the AutoML challenge series 2015-2018, in AutoML, "
        "Springer 2019",
        "OpenML fabert: id 41164 is our guess (the issue found none; the AutoML-challenge "
        "uploads around dilbert=41163), unconfirmed; paper: first 500 per class → 3500",
    ),
    (
        "dilbert",
        41163,
        1,
        (10000, 2000),
        5,
        700,
        "I. Guyon et al., Analysis of the AutoML challenge series 2015-2018, in AutoML, "
        "Springer 2019",
        "OpenML dilbert (id 41163, unconfirmed); paper: first 700 per class → 3500",
    ),
]:
    CATALOG.append(
        DatasetSpec(
            name=_name,
            source="openml",
            n_samples=_raw[0] if _per is None else _per * _k,
            n_features=_raw[1],
            n_classes=_k,
            loader=_openml_loader(_name),
            citation=_cite,
            papers=_KM,
            options={} if _per is None else {"per_class": _per},
            needs_network=True,
            file_format="openml",
            openml_id=_id,
            openml_version=_ver,
            raw_shape=_raw,
            subsample="" if _per is None else f"first {_per} samples of each class (§V-A)",
            notes=_note,
        )
    )

# -- Fashion-MNIST: the four official IDX files ------------------------------
_FMNIST = ("zalandoresearch/fashion-mnist", "b2617bb6d3ffa2e429640350f613e3291e10b141")
#: (mirror path, sha256, path in the repository): the training images and labels, then the
#: test ones; the full set is the 60 000 training rows followed by the 10 000 test rows
_FMNIST_FILES = (
    (
        "FashionMNIST/train-images-idx3-ubyte.gz",
        "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        "data/fashion/train-images-idx3-ubyte.gz",
    ),
    (
        "FashionMNIST/train-labels-idx1-ubyte.gz",
        "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        "data/fashion/train-labels-idx1-ubyte.gz",
    ),
    (
        "FashionMNIST/t10k-images-idx3-ubyte.gz",
        "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        "data/fashion/t10k-images-idx3-ubyte.gz",
    ),
    (
        "FashionMNIST/t10k-labels-idx1-ubyte.gz",
        "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
        "data/fashion/t10k-labels-idx1-ubyte.gz",
    ),
)


def _idx_loader(
    seed: int = 0,
    mirror=None,
    cache=None,
    per_class: int | None = None,
    files: tuple = (),
    repo: tuple[str, str] = ("", ""),
):
    """Fashion-MNIST from its IDX files (images, labels pairs, in order), each from the
    mirror or its pinned URL with its sha256 checked; the images flattened row by row
    (28 × 28 → 784 features)."""
    spec = get_dataset("fashion_mnist")
    Xs, ys = [], []
    for images, labels in zip(files[0::2], files[1::2], strict=True):
        pair = []
        for filename, sha256, path in (images, labels):
            local = fetch_file(
                spec.name,
                filename=filename,
                sha256=sha256,
                url=raw_github_url(*repo, path),
                mirror=mirror,
                cache=cache,
            )
            pair.append((read_idx(local), local))
        (X, x_path), (y, y_path) = pair
        if X.ndim != 3 or y.ndim != 1 or len(X) != len(y):
            raise ValueError(
                f"dataset 'fashion_mnist': {x_path} holds {X.shape} images and {y_path} "
                f"{y.shape} labels; expected n × 28 × 28 images and n labels"
            )
        Xs.append(X.reshape(len(X), -1))
        ys.append(y)
    X, y = np.concatenate(Xs), np.concatenate(ys)
    _check_raw(spec, X, y, "the Fashion-MNIST IDX files")
    X, y = _subsample(X, y, per_class)
    return X, y, None


CATALOG.append(
    DatasetSpec(
        name="fashion_mnist",
        source="url",
        n_samples=3000,
        n_features=784,
        n_classes=10,
        loader=_idx_loader,
        citation="H. Xiao, K. Rasul, R. Vollgraf, Fashion-MNIST, arXiv:1708.07747, 2017",
        papers=_KM,
        # the files are options, so that their hashes are part of the data set's lineage
        options={"per_class": 300, "files": _FMNIST_FILES, "repo": _FMNIST},
        url=raw_github_url(*_FMNIST, _FMNIST_FILES[0][2]),
        filename=_FMNIST_FILES[0][0],
        sha256=_FMNIST_FILES[0][1],
        file_format="idx",
        variables=("images", "labels"),
        raw_shape=(70000, 784),
        subsample="first 300 samples of each class (§V-A): all from the training file",
        notes="the four official IDX files (training, then test: 70 000 rows); the "
        "mirror's FashionMNIST/MANIFEST.tsv gives their provenance; all four are in "
        "options['files'] with their sha256",
    )
)

# -- no public copy known (manual mirror copy only) ---------------------------------------
for _name, _file, _shape, _papers, _cite, _home, _note in [
    (
        "20ng",
        "20NG/20NG.mat",
        (3970, 1000, 4),
        ("fsbc",),
        "D. Cai, X. He, W. Zhang, J. Han, Regularized locality preserving indexing via "
        "spectral regression, CIKM 2007 (FSBC [48])",
        "http://www.cad.zju.edu.cn/home/dengcai/Data/TextData.html (http only, unverified)",
        "4-class, 1000-term subset of 20 Newsgroups; no public pinned copy found",
    ),
]:
    CATALOG.append(
        DatasetSpec(
            name=_name,
            source="manual",
            n_samples=_shape[0],
            n_features=_shape[1],
            n_classes=_shape[2],
            loader=_file_loader(_name),
            citation=_cite,
            papers=_papers,
            needs_network=True,
            filename=_file,
            file_format="mat",
            raw_shape=_shape[:2],
            homepage=_home,
            notes=_note + "; a copy placed at <mirror>/" + _file + " is read unverified "
            "(warning with its sha256) and its shape is checked",
        )
    )

# -- FSBC's Mnist4000: a public 4000-digit copy -----------------------------------------------
CATALOG.append(
    _url_entry(
        "mnist4000",
        "Extended/MNIST4000/mnist.mat",
        "1fb8e3de70753bfb8aa1f45e8ec968591d00a0773e2f81558ce222bf20d9114e",
        (4000, 784, 10),
        ("fea", "gnd"),
        ("ma-xu/L21FS", "b9d4e8eb7f6d7b5ccc62f9e638bdaef798b62e5e"),
        "data/mnist.mat",
        "MNIST: Y. LeCun, L. Bottou, Y. Bengio, P. Haffner, Gradient-based learning applied "
        "to document recognition, Proc. IEEE 86(11), 1998; FSBC's Mnist4000 cites D. Cai, "
        "X. He, J. Han, T. Huang, Graph regularized NMF, IEEE TPAMI 33(8), 2011 (FSBC [50]); "
        "this copy: ma-xu/L21FS data/mnist.mat (4000 digits of MNIST, which ones not stated)",
        ("fsbc",),
        "which 4000 of the 70 000 MNIST digits, and how they were drawn, is stated neither by "
        "FSBC nor by the copy's repository: FSBC's cells are computed on this public copy, "
        "which may not be the paper's draw (classes 366-454 digits each, not balanced); "
        "pixel values 0-255, variables fea/gnd (labels 0..9)",
    )
)

# -- PMLB (no paper) ---------------------------------------------------------------------
#: Penn Machine Learning Benchmarks at a pinned commit; its files are Git LFS objects
_PMLB = ("EpistasisLab/pmlb", "9cc9017958f2d8284e62d8bc54b77cb6fa1e9592")
_PMLB_CITE = (
    "PMLB: J. Romano, T. Le, W. La Cava, J. Gregg, D. Goldberg, P. Chakraborty, N. Ray, "
    "D. Himmelstein, W. Fu, J. Moore, PMLB v1.0: an open-source dataset collection for "
    "benchmarking machine learning methods, Bioinformatics 38(3), 2022"
)
_EXTRA_PMLB = "not used by the five papers; the mirror's PMLB/ folder (PMLB/MANIFEST.tsv)"


def lfs_media_url(repo: str, commit: str, path: str) -> str:
    """HTTPS URL of the content of the Git LFS file ``path`` of GitHub repository ``repo``
    at ``commit``: its raw URL serves the LFS pointer, whose oid is the sha256 of this
    content."""
    return f"https://media.githubusercontent.com/media/{repo}/{commit}/{path}"


def _reader_loader(name: str, read: Callable[..., tuple[np.ndarray, np.ndarray]]):
    """Loader of the data set ``name`` whose file ``read`` parses
    (:mod:`ufs.datasets.readers`): the file from the mirror, the cache or its pinned URL,
    sha256-checked (:func:`_fetch`), the entry's ``options`` other than ``per_class``
    passed to ``read``, the raw shape and class count checked (:func:`_check_raw`)."""

    def load(seed: int = 0, mirror=None, cache=None, per_class: int | None = None, **read_options):
        spec = get_dataset(name)
        path = _fetch(spec, mirror, cache)
        X, y = read(path, **read_options)
        _check_raw(spec, X, y, path)
        X, y = _subsample(X, y, per_class)
        return X, y, None

    load.__name__ = f"load_{name}"
    return load


def _read_entry(
    name: str,
    filename: str,
    sha256: str,
    shape: tuple[int, int, int],
    url: str,
    read: Callable[..., tuple[np.ndarray, np.ndarray]],
    file_format: str,
    variables: tuple[str, ...],
    citation: str,
    *,
    url_sha256: str = "",
    options: dict[str, Any] | None = None,
    notes: str = "",
) -> DatasetSpec:
    """A file-backed entry read by ``read`` (:func:`_reader_loader`); ``url_sha256`` is the
    hash of the download when the mirror holds it gzip-compressed."""
    n, p, k = shape
    return DatasetSpec(
        name=name,
        source="url",
        n_samples=n,
        n_features=p,
        n_classes=k,
        loader=_reader_loader(name, read),
        citation=citation,
        options=dict(options or {}),
        url=url,
        filename=filename,
        sha256=sha256,
        url_sha256=url_sha256,
        file_format=file_format,
        variables=variables,
        raw_shape=(n, p),
        notes=notes,
    )


# (name as in PMLB, sha256 = the LFS oid, (n, p, k) after dropping identifiers, identifier
# columns dropped, original source, caveats); p counts the features, not ``target``
for _name, _sha, _shape, _drop, _cite, _note in [
    (
        "ionosphere",
        "adb6fc877404f2b55f6d59fc7322265c733f5cf0ae6d7c2e52c3468733630023",
        (351, 34, 2),
        (),
        "V. Sigillito, S. Wing, L. Hutton, K. Baker, Classification of radar returns from the "
        "ionosphere using neural networks, Johns Hopkins APL Tech. Digest 10, 1989 (UCI "
        "Ionosphere)",
        "one column is constant (all 0); 1 duplicated row",
    ),
    (
        "sonar",
        "64378cabaecdb50e2e1e644c1d6bc359f0627ebe313870ad09e1e41ed972529b",
        (208, 60, 2),
        (),
        "R. Gorman, T. Sejnowski, Analysis of hidden units in a layered network trained to "
        "classify sonar targets, Neural Networks 1(1), 1988 (UCI Connectionist Bench, Sonar)",
        "",
    ),
    (
        "spectf",
        "664081130aa48fc189b2e1d3c44332f0b3eb1ee6d31b79af1643c137697677e4",
        (349, 44, 2),
        (),
        "L. Kurgan, K. Cios, R. Tadeusiewicz, M. Ogiela, L. Goodenday, Knowledge discovery "
        "approach to automated cardiac SPECT diagnosis, Artif. Intell. Med. 23(2), 2001 (UCI "
        "SPECTF Heart)",
        "82 exact duplicate rows (267 unique = UCI's 267 patients); integer ROI counts",
    ),
    (
        "spambase",
        "735e8d43f7ee78ac54ca17404510e95f4c8b364a721e4d9532a1b3221ed70961",
        (4601, 57, 2),
        (),
        "M. Hopkins, E. Reeber, G. Forman, J. Suermondt, Spambase, UCI 1999",
        "word/character frequencies and 3 heavy-tailed capital-run-length columns",
    ),
    (
        "satimage",
        "1ee8cf9693351db7afe68f6fc32942845caae3e1030c688efa6c5d0b24229f46",
        (6435, 36, 6),
        (),
        "UCI Statlog (Landsat Satellite), A. Srinivasan 1993; D. Michie, D. Spiegelhalter, "
        "C. Taylor, Machine Learning, Neural and Statistical Classification, 1994",
        "integer pixel values of 4 bands × 3 × 3 neighbourhoods",
    ),
    (
        "texture",
        "94abf897fcd6d93b0f78ea309b10ef5b83a8b95e46aa29974a43dbefb3741c0c",
        (5500, 40, 11),
        (),
        "ELENA project (ESPRIT 6891) Texture data, Brodatz textures (as in KEEL)",
        "",
    ),
    (
        "waveform_40",
        "b095f9d384fbac256b5870d3ca01d687e776a81457351a8a6fa56e7f1d09c4b0",
        (5000, 40, 3),
        (),
        "L. Breiman, J. Friedman, R. Olshen, C. Stone, Classification and Regression Trees, "
        "Wadsworth 1984 (UCI Waveform Database Generator, version 2)",
        "drawn from a generator: 19 of the 40 features are pure noise by construction",
    ),
    (
        "tokyo1",
        "cc56489ff84d05337006dd509c1c5cf3a531a408d4e7e4432f73e797fe06face",
        (959, 44, 2),
        (),
        "OpenML tokyo1 (Tokyo SGI server performance data; no original study stated)",
        "columns io_namei and net_frac_busy are constant",
    ),
    (
        "movement_libras",
        "77c9c61118e72c3f49f52fd5eda8ec95ce9a573cb2f1a51b15480966f320fc85",
        (360, 90, 15),
        (),
        "D. Dias, R. Madeo, T. Rocha, H. Bíscaro, S. Peres, Hand movement recognition for "
        "Brazilian Sign Language, IJCNN 2009 (UCI Libras Movement)",
        "45 (x, y) trajectory coordinates",
    ),
    (
        "analcatdata_authorship",
        "1b26db950ef47fb34fb31958dd18912e279e6a668b0b88834182d303d616b88d",
        (841, 70, 4),
        (),
        "J. Simonoff, Analyzing Categorical Data, Springer 2003 (OpenML "
        "analcatdata_authorship: function-word counts of 4 authors)",
        "integer word counts",
    ),
    (
        "clean1",
        "a96ca8012634e20d924624747b939c1b99f7b4ec36a7819c80c962d7a1fafe49",
        (476, 166, 2),
        ("molecule_name", "conformation_name"),
        "T. Dietterich, R. Lathrop, T. Lozano-Pérez, Solving the multiple instance problem "
        "with axis-parallel rectangles, Artif. Intell. 89, 1997 (UCI Musk, version 1)",
        "the identifier columns molecule_name and conformation_name are dropped (166 of 168 "
        "columns are features)",
    ),
    (
        "Hill_Valley_without_noise",
        "c3fd942d6e092d477236c2fd28f5277030a248ded8b1be1b42f999305dd48be7",
        (1212, 100, 2),
        (),
        "L. Graham, F. Oppacher, Hill-Valley, UCI 2008 (the version without noise)",
        "synthetic terrain curves of 100 points; the row scale varies widely",
    ),
    (
        "dermatology",
        "c8852ba546e92249debecd9a897cda3f94fd10872fa13c62eb14ab40e279166e",
        (366, 34, 6),
        (),
        "H. Güvenir, G. Demiröz, N. İlter, Learning differential diagnosis of "
        "erythemato-squamous diseases using voting feature intervals, Artif. Intell. Med. "
        "13(3), 1998 (UCI Dermatology)",
        "32 ordinal 0-3 codes, a binary and the age; UCI's 8 missing ages are filled (one is 0)",
    ),
    (
        "mfeat_pixel",
        "2ec3aa555bffb8694d90f857e5728b63db5d648aa9de2999767428d0f97c0801",
        (2000, 240, 10),
        (),
        "UCI Multiple Features (R. Duin), 'pix' = 240 pixel averages; M. van Breukelen, "
        "R. Duin, D. Tax, J. den Hartog, Handwritten digit recognition by combined "
        "classifiers, Kybernetika 34(4), 1998",
        "the same 2000 digits as mfeat_fac (another view; family mfeat_fac); 6 duplicated rows",
    ),
    (
        "dna",
        "017e1ff56435818b639cc788ee35df6cee7ac2aea19cc62dcb10a3a0c60b6340",
        (3186, 180, 3),
        (),
        "StatLog DNA (D. Michie, D. Spiegelhalter, C. Taylor 1994): UCI primate splice-junction "
        "sequences (G. Towell, M. Noordewier, J. Shavlik), 60 positions × 3 binary indicators",
        "180 binary indicators",
    ),
    (
        "kr_vs_kp",
        "f1004d98e1ca1fcfd9809627e4a751c7acd821743a75e49c6f2a8853f32fb24f",
        (3196, 36, 2),
        (),
        "A. Shapiro, Structured Induction in Expert Systems, Addison-Wesley 1987 (UCI Chess, "
        "King-Rook vs. King-Pawn)",
        "35 binary board features and one ternary code",
    ),
    (
        "backache",
        "21d506c397dfeb3edbbbc253b923f59be6edb516689677ebef535296c6c62242",
        (180, 31, 2),
        ("id",),
        "C. Chatfield, Problem Solving: A Statistician's Guide, Chapman & Hall 1988 (OpenML "
        "backache: back pain in pregnancy)",
        "the row index column id is dropped (31 of 32 columns are features); imbalanced (155/25)",
    ),
    (
        "flags",
        "ff82ee2887c023ec8c2e43877a13022bafac66211cdd50453738947a702d447f",
        (178, 43, 5),
        (),
        "UCI Flags (R. Forsyth 1986, from the Collins Gem Guide to Flags)",
        "label = religion; PMLB dropped the 3 religions with < 10 flags (178 of 194 rows); "
        "5 duplicated rows",
    ),
]:
    _path = f"datasets/{_name}/{_name}.tsv.gz"
    CATALOG.append(
        _read_entry(
            f"pmlb_{_name.lower()}",
            f"PMLB/{_name}.tsv.gz",
            _sha,
            _shape,
            lfs_media_url(*_PMLB, _path),
            read_pmlb_tsv,
            "tsv",
            ("tab-separated with a header", "label column target"),
            f"{_cite}; {_PMLB_CITE}",
            options={"drop": _drop} if _drop else {},
            notes=_EXTRA_PMLB + (f"; {_note}" if _note else ""),
        )
    )

# -- the mirror's Extended/ folder (no paper) -----------------------------------------------
_EXTRA_EXT = "not used by the five papers; the mirror's Extended/ folder (Extended/README.md)"
_L21FS = ("ma-xu/L21FS", "b9d4e8eb7f6d7b5ccc62f9e638bdaef798b62e5e")
_TOCDMB = ("wzkhan89/TOCDMB_Sourcecode", "55db6560b7974e63be50a5a6c981b5954f7657ad")
_UNIFIED = ("jadsoncastro/UnifiedView", "e43d56409f6362eefccedac5ad7dee02ddbe04c3")
_UNIFIED_CITE = (
    "copy of jadsoncastro/UnifiedView: J. Gertrudes, A. Zimek, R. Campello, A unified view "
    "of density-based methods for semi-supervised clustering and classification, Data Min. "
    "Knowl. Disc. 33(6), 2019"
)
_BICLUST = ("padilha/biclustlib", "bfadbd6944cc3b5b297e4018dd1437ddfb1f589f")
_DE_SOUTO_CITE = (
    "the cancer benchmark of M. de Souto, I. Costa, D. de Araujo, T. Ludermir, A. Schliep, "
    "Clustering cancer gene expression data: a comparative study, BMC Bioinformatics 9:497, "
    "2008, as shipped by padilha/biclustlib (V. Padilha, R. Campello, A systematic "
    "comparative evaluation of biclustering techniques, BMC Bioinformatics 18:55, 2017)"
)
_NIPS2003 = (
    "I. Guyon, S. Gunn, A. Ben-Hur, G. Dror, Result analysis of the NIPS 2003 feature "
    "selection challenge, NIPS 17, 2004"
)
_ECFP = (
    "ECFP_4 fingerprints (D. Rogers, M. Hahn, Extended-connectivity fingerprints, J. Chem. "
    "Inf. Model. 50(5), 2010) computed by the repository's authors"
)
_REPROCESSED = "a re-processing by the repository's authors, not the original's layout"

# .mat files with a (data, labels) variable pair: the mirror's own loader
for _name, _file, _sha, _shape, _vars, _repo, _path, _cite, _note in [
    (
        "binaryalphadigits",
        "Extended/BinaryAlphadigits/binaryalphadigs.mat",
        "13a5b25f26f75564bfa2de1d776e994ffb0e5923930def10f1d9e84ee7f907c4",
        (1404, 320, 36),
        ("fea", "gnd"),
        _L21FS,
        "data/binaryalphadigs.mat",
        "S. Roweis, Binary Alphadigits (https://cs.nyu.edu/~roweis/data.html): 0-9 and A-Z, "
        "39 binary 20 × 16 images each; copy of ma-xu/L21FS",
        "",
    ),
    (
        "cnae9",
        "Extended/CNAE9/CNAE9.mat",
        "cc8c4043fca7199c27d5cb6690f548ec3726c64c6d27a0ce02a58d83490bb558",
        (1080, 856, 9),
        ("fea", "gnd"),
        _L21FS,
        "data/CNAE9.mat",
        "P. Ciarelli, E. Oliveira, Agglomeration and elimination of terms for dimensionality "
        "reduction, ISDA 2009 (UCI CNAE-9: business descriptions of Brazilian companies, "
        "bag of words); copy of ma-xu/L21FS",
        "word counts 0-4",
    ),
    (
        "dorothea",
        "Extended/Dorothea/dorothea.mat",
        "e354a06f30a0173b27cf50cd3c35590007f6420316eee6dc4f1a126211f37ea5",
        (800, 100000, 2),
        ("X_train", "Y_train"),
        _TOCDMB,
        "data/dorothea.mat",
        "DOROTHEA (DuPont Pharmaceuticals thrombin-binding compounds, KDD Cup 2001): "
        + _NIPS2003
        + "; copy of wzkhan89/TOCDMB_Sourcecode",
        "the 800 labelled training samples only (X_valid, X_test are unlabelled); sparse "
        "binary, read dense: 640 MB as float64; 11 881 of the 100 000 features are all zero "
        "in these samples; imbalanced (722/78)",
    ),
    (
        "extyaleb32",
        "Extended/ExtYaleB32/YaleB_32x32.mat",
        "3fbbda4eb781b9bb28025189677b6727706e114eb0215bbfd718f1f4fcb54b99",
        (2414, 1024, 38),
        ("fea", "gnd"),
        _L21FS,
        "data_todo/YaleB_32x32.mat",
        "A. Georghiades, P. Belhumeur, D. Kriegman, From few to many: illumination cone "
        "models for face recognition under variable lighting and pose, IEEE TPAMI 23(6), 2001; "
        "K.-C. Lee, J. Ho, D. Kriegman, IEEE TPAMI 27(5), 2005 (Extended Yale B, cropped); "
        "32 × 32 version of D. Cai (http://www.cad.zju.edu.cn/home/dengcai/Data/FaceData.html); "
        "copy of ma-xu/L21FS",
        "38 subjects, not the 15 of yale (another face database)",
    ),
    (
        "madelon",
        "Extended/Madelon/madelon.mat",
        "63cf11c710d438fd510763df6369d952194825def79ce509f0e472ecf05f9d7f",
        (2000, 500, 2),
        ("fea", "gnd"),
        _L21FS,
        "data/madelon.mat",
        "MADELON (synthetic: points on the vertices of a 5-dimensional hypercube, 480 "
        "distractor features): " + _NIPS2003 + "; copy of ma-xu/L21FS (scikit-feature's madelon)",
        "the 2000-sample training split only; labels -1/1",
    ),
    (
        "msra25",
        "Extended/MSRA25/MSRA25_uni.mat",
        "3c8681c40ebbed2f6dc2d2f30e7c5195e947467e8cf6797faa44753a190cd659",
        (1799, 256, 12),
        ("X", "Y"),
        _L21FS,
        "data_todo/unprocessed/MSRA25_uni.mat",
        "M. Wang, L. Yang, X.-S. Hua, MSRA-MM: bridging research and industrial societies for "
        "multimedia information retrieval, Microsoft Research Asia, MSR-TR-2009-30, 2009 (16 × "
        "16 face images of 12 people); copy of ma-xu/L21FS",
        "the repository's 'unprocessed' copy (variables X/Y); its data/MSRA.mat holds the same "
        "data as fea/gnd",
    ),
    (
        "pcmac",
        "Extended/PCMAC/PCMAC.mat",
        "9999dfccf97ab88f87127dd3457da436acb75cda9f0af4750e7cae5fe1a31b25",
        (1943, 3289, 2),
        ("X", "Y"),
        _L21FS,
        "data_todo/unprocessed/PCMAC.mat",
        "K. Lang, NewsWeeder: learning to filter netnews, ICML 1995 (20 Newsgroups: "
        "comp.sys.ibm.pc.hardware vs comp.sys.mac.hardware); " + _SKF_CITE + "; copy of "
        "ma-xu/L21FS",
        "term counts; 20 Newsgroups, as is 20ng (family 20ng); the repository's 'unprocessed' "
        "copy (variables X/Y); its data/PCMAC.mat holds the same matrix as fea/gnd",
    ),
    (
        "tumors11",
        "Extended/Tumors11/11Tumor.mat",
        "c372e8d325febdc3ce9f31dc4a8b7bcb5ca82b12332ede3ad9d204b13d6ac7cc",
        (174, 12533, 11),
        ("ins", "lab"),
        _TOCDMB,
        "data/11Tumor.mat",
        "A. Su et al., Molecular classification of human carcinomas by use of gene expression "
        "signatures, Cancer Res. 61(20), 2001; GEMS 11_Tumors: A. Statnikov, C. Aliferis, "
        "I. Tsamardinos, D. Hardin, S. Levy, A comprehensive evaluation of multicategory "
        "classification methods for microarray gene expression cancer diagnosis, "
        "Bioinformatics 21(5), 2005; copy of wzkhan89/TOCDMB_Sourcecode",
        "the study of scikit-feature's Carcinom (not registered); integer expression values "
        "(negative ones too)",
    ),
]:
    CATALOG.append(
        _url_entry(
            _name,
            _file,
            _sha,
            _shape,
            _vars,
            _repo,
            _path,
            _cite,
            notes=_EXTRA_EXT + (f"; {_note}" if _note else ""),
        )
    )

CATALOG.append(
    _read_entry(
        "arcene",
        "Extended/Arcene/arcene.mat",
        "58c52abb09a41c1fb69bcfd0498c8b19ed8e6f8caa76fbc653fca3543ab0bd80",
        (100, 10000, 2),
        raw_github_url(*_TOCDMB, "data/arcene.mat"),
        read_mat_label_last,
        "mat",
        ("arcene", "last column = label"),
        "ARCENE (SELDI mass spectra, cancer vs normal: E. Petricoin et al., Lancet 359, 2002; "
        "B.-L. Adam et al., Cancer Res. 62, 2002): " + _NIPS2003 + "; copy of "
        "wzkhan89/TOCDMB_Sourcecode",
        options={"variable": "arcene"},
        notes=_EXTRA_EXT + "; the 100-sample training split only; one 100 × 10 001 matrix, "
        "the label (1/2) its last column",
    )
)

CATALOG.append(
    _read_entry(
        "meats_nir",
        "Extended/Meats_NIR/meats.rda",
        "d6e068a05a45736da28fae20a2380cf6c868978e22a2398204a0109dd5445453",
        (231, 1050, 5),
        raw_github_url(
            "antoniocarlosrodriguezbajo/diceR_plus",
            "d13ff712ca011d3b1e43bd54f0ac8c4d3cb54f9d",
            "data/meats.rda",
        ),
        read_rda_frame,
        "rda",
        ("data frame meats", "factor class"),
        "J. McElhinney, G. Downey, T. Fearn, Chemometric processing of visible and near "
        "infrared reflectance spectra for species identification in selected raw homogenised "
        "meats, J. Near Infrared Spectrosc. 7(3), 1999; T. Murphy, N. Dean, A. Raftery, "
        "Variable selection and updating in model-based discriminant analysis for high "
        "dimensional data with food authenticity applications, Ann. Appl. Stat. 4(1), 2010; "
        "copy of antoniocarlosrodriguezbajo/diceR_plus",
        options={"frame": "meats", "label": "class"},
        notes=_EXTRA_EXT + "; NIR absorbances at 400-2498 nm (columns X400..X2498) of 5 "
        "meats; an xz-compressed R data file (a data.table), read by ufs.datasets.rdata",
    )
)

#: ACS-F1's two sktime files, TRAIN then TEST: (mirror path, its sha256, path in the
#: repository, sha256 of the download: the mirror holds each gzip-compressed)
_ACSF1 = ("sktime/sktime", "7bd7d1620c0656f3210eeb850bb1c0034159ee47")
_ACSF1_FILES = (
    (
        "Extended/ACSF1/ACSF1_TRAIN.ts.gz",
        "ecf7c694e142934f2fadd0fa3d7b03dd9ac32a2c5c4f3d68fb6f793f19c9dfec",
        "sktime/datasets/data/ACSF1/ACSF1_TRAIN.ts",
        "0646b90dc4843e02baed6b2ba345c5601a4991b6796565489cef1b2d92a7537b",
    ),
    (
        "Extended/ACSF1/ACSF1_TEST.ts.gz",
        "1fdcade7d5ff6e51a0c6a82f3893f550b488b6b754a6c645408856308d30eab2",
        "sktime/datasets/data/ACSF1/ACSF1_TEST.ts",
        "93e8aaeb44a10af181d24a156e60da7021193cd990ca28f263fccf3b905bfebf",
    ),
)


def _ts_loader(
    seed: int = 0,
    mirror=None,
    cache=None,
    per_class: int | None = None,
    files: tuple = (),
    repo: tuple[str, str] = ("", ""),
):
    """ACS-F1 from its sktime ``.ts`` files (``files``: TRAIN then TEST), each from the
    mirror (gzip-compressed) or its pinned URL (plain text), sha256-checked, the series
    concatenated in that order (:func:`ufs.datasets.readers.read_ts`)."""
    spec = get_dataset("acsf1")
    paths = [
        fetch_file(
            spec.name,
            filename=filename,
            sha256=sha256,
            url=raw_github_url(*repo, path),
            url_sha256=url_sha256,
            mirror=mirror,
            cache=cache,
        )
        for filename, sha256, path, url_sha256 in files
    ]
    X, y = read_ts(paths)
    _check_raw(spec, X, y, "the ACS-F1 .ts files")
    X, y = _subsample(X, y, per_class)
    return X, y, None


CATALOG.append(
    DatasetSpec(
        name="acsf1",
        source="url",
        n_samples=200,
        n_features=1460,
        n_classes=10,
        loader=_ts_loader,
        citation="C. Gisler, A. Ridi, D. Zufferey, O. Abou Khaled, J. Hennebert, Appliance "
        "consumption signature database and recognition test protocols, WoSSPA 2013 (ACS-F1); "
        "UCR archive: H. Dau et al., The UCR time series archive, IEEE/CAA J. Autom. Sinica "
        "6(6), 2019; copy of sktime/sktime (M. Löning et al., sktime: a unified interface for "
        "machine learning with time series, NeurIPS Workshop 2019)",
        # the files are options, so that their hashes are part of the data set's lineage
        options={"files": _ACSF1_FILES, "repo": _ACSF1},
        url=raw_github_url(*_ACSF1, _ACSF1_FILES[0][2]),
        filename=_ACSF1_FILES[0][0],
        sha256=_ACSF1_FILES[0][1],
        url_sha256=_ACSF1_FILES[0][3],
        file_format="ts",
        variables=("sktime .ts series", "class label after ':'"),
        raw_shape=(200, 1460),
        notes=_EXTRA_EXT + "; power-consumption signatures of 10 kinds of appliance, 1460 "
        "time points; TRAIN (100) then TEST (100) series; both files are in options['files']",
    )
)

# de Souto et al.'s genes × samples tables (the mirror gzips those over 1 MB)
for _name, _file, _sha, _url_sha, _shape, _path, _cite, _note in [
    (
        "bhattacharjee2001_lung",
        "Bhattacharjee2001_lung/bhattacharjee-2001_database.txt.gz",
        "ecb31c0200ef9d747a7786e9c3f6030f519810c28486272fc00453ffc6a990ff",
        "6a3e1028c841aa451fa85f8f730f565a99b23632d40df06b5d84c6defdfd15be",
        (203, 1543, 5),
        "bhattacharjee-2001_database.txt",
        "A. Bhattacharjee et al., Classification of human lung carcinomas by mRNA expression "
        "profiling reveals distinct adenocarcinoma subclasses, PNAS 98(24), 2001",
        "the study of lung (scikit-feature's 203 × 3312; family lung), here de Souto's "
        "1543-gene filtering; not lung_discrete",
    ),
    (
        "chen2002_liver",
        "Chen2002_liver/chen-2002_database.txt",
        "0baac5620207df6555a2794fc2a84d526ae16944a31f5c6f58bcd1ee6629364e",
        "",
        (179, 85, 2),
        "chen-2002_database.txt",
        "X. Chen et al., Gene expression patterns in human liver cancers, Mol. Biol. Cell "
        "13(6), 2002",
        "only 85 genes (de Souto's filtering); log ratios",
    ),
    (
        "chowdary2006",
        "Chowdary2006/chowdary-2006_database.txt",
        "8e43cb58fec77ddeb55260586ffd410227f6b1ad254f96656775442e9f96b182",
        "",
        (104, 182, 2),
        "chowdary-2006_database.txt",
        "D. Chowdary et al., Prognostic gene expression signatures can be measured in tissues "
        "collected in RNAlater preservative, J. Mol. Diagn. 8(1), 2006 (breast vs colon "
        "tumours)",
        "",
    ),
    (
        "gordon2002_lung",
        "Gordon2002_lung/gordon-2002_database.txt.gz",
        "a3e679b804461bc90cd053de4e2dd66cbf367f135f4d7a461230301ee0be1cdd",
        "c08bae65a60daac23754d382b3e534e6a254be46bb1d58db97cc419acb970c68",
        (181, 1626, 2),
        "gordon-2002_database.txt",
        "G. Gordon et al., Translation of microarray data into clinically relevant cancer "
        "diagnostic tests using gene expression ratios in lung cancer and mesothelioma, "
        "Cancer Res. 62(17), 2002",
        "imbalanced (150/31)",
    ),
    (
        "lapointe2004_prostate",
        "Lapointe2004_prostate/lapointe-2004-v2_database.txt.gz",
        "4740700a3ec8d665b9222d3fd05510d8b35ce18695874b80bc7650d8cbc51d9c",
        "c42f5b450baa3bd62e36291652650f3bd432ec8e33133d6620fbf4ca627b4309",
        (110, 2496, 4),
        "lapointe-2004-v2_database.txt",
        "J. Lapointe et al., Gene expression profiling identifies clinically relevant subtypes "
        "of prostate cancer, PNAS 101(3), 2004",
        "de Souto's version 2 (4 classes); another study than prostate_ge",
    ),
    (
        "ramaswamy2001_gcm",
        "Ramaswamy2001_GCM/ramaswamy-2001_database.txt.gz",
        "dda7464699c5ef9906c71888c349d5f49dcd95c7c69c3b2cbd3d49cbecdcf8ec",
        "294a364131c2a8bba74ae65e099a3d10a5f3a30fd002af18db31fb924245d364",
        (190, 1363, 14),
        "ramaswamy-2001_database.txt",
        "S. Ramaswamy et al., Multiclass cancer diagnosis using tumor gene expression "
        "signatures, PNAS 98(26), 2001",
        "14 tumour types of 10-30 samples",
    ),
    (
        "tomlins2006_prostate",
        "Tomlins2006_prostate/tomlins-2006_database.txt.gz",
        "f80087e8145386a4a228a60261948a664acf7566374a2e6a719cba7a87105745",
        "a3bcb01b4f419bb514ae8ddf242410768899f3a79f237566edb006098203068d",
        (104, 2315, 5),
        "tomlins-2006_database.txt",
        "S. Tomlins et al., Integrative molecular concept modeling of prostate cancer "
        "progression, Nat. Genet. 39(1), 2007",
        "another study than prostate_ge and lapointe2004_prostate",
    ),
    (
        "yeoh2002_all",
        "Yeoh2002_ALL/yeoh-2002-v2_database.txt.gz",
        "a015dfae37f909930f53b9585f32fcf7cde720e6b7f0939d590d06e743f673c8",
        "c607dca7ddc7ad89a5525a39c1f42972bdee0193846d142a22451a2dae8bafd1",
        (248, 2526, 6),
        "yeoh-2002-v2_database.txt",
        "E.-J. Yeoh et al., Classification, subtype discovery, and prediction of outcome in "
        "pediatric acute lymphoblastic leukemia by gene expression profiling, Cancer Cell "
        "1(2), 2002",
        "de Souto's version 2 (6 subtypes); another study than Golub's (allaml)",
    ),
]:
    CATALOG.append(
        _read_entry(
            _name,
            f"Extended/{_file}",
            _sha,
            _shape,
            raw_github_url(*_BICLUST, f"biclustlib/datasets/data/cancer_benchmark/{_path}"),
            read_gene_table,
            "txt",
            ("genes × samples, tab-separated", "first row GENES + class labels"),
            f"{_cite}; {_DE_SOUTO_CITE}",
            url_sha256=_url_sha,
            notes=_EXTRA_EXT + "; de Souto et al.'s filtered genes, transposed to samples × "
            "genes" + (f"; {_note}" if _note else ""),
        )
    )

# the UnifiedView repository's CSV files (label last; the mirror gzips those over 1 MB)
for _name, _file, _sha, _url_sha, _shape, _path, _cite, _note in [
    (
        "articles1442",
        "Articles1442/articles_1442_5.data.gz",
        "c1cceaf5eabe811fee043935ecedb2ee899e8a7d488f500f1743207266e91779",
        "c68b567b47f4eb9b9c8b34b3347906f39c7738a91609b130144680100a9bd6ff",
        (253, 4636, 5),
        "articles_1442_5.data",
        "Articles-1442-5, news articles in 5 topics as TF-IDF term weights (the original "
        "document collection is not stated in the repository)",
        "source not documented; " + _REPROCESSED,
    ),
    (
        "cardiotocography",
        "Cardiotocography/cardiotocography.data.gz",
        "4c2cfb5eb4fb3379cec226312222810fa0f308bf68c0dc59476d1e02672ec98f",
        "738e15f41c73e0edd41dfd3a6ca4e7cc8462f5a268a52c937e0a1f14531d5c86",
        (2126, 35, 10),
        "cardiotocography.data",
        "D. Ayres-de-Campos, J. Bernardes, A. Garrido, J. Marques-de-Sá, L. Pereira-Leite, "
        "SisPorto 2.0: a program for automated analysis of cardiotocograms, J. Matern. Fetal "
        "Med. 9(5), 2000 (UCI Cardiotocography, 10 FHR pattern classes)",
        "standardised, 35 columns against UCI's 21 attributes (their meaning not documented); "
        + _REPROCESSED,
    ),
    (
        "dhfr_ecfp4",
        "DHFR_ECFP4/dhfr_ECFP_4.data",
        "c20f1e2e2d114d15d19af587e89456f81a4494d7035c0837e8bd009f7b6f5042",
        "",
        (397, 1024, 2),
        "dhfr_ECFP_4.data",
        "DHFR inhibitors: J. Sutherland, L. O'Brien, D. Weaver, Spline-fitting with a genetic "
        "algorithm: a method for developing classification structure-activity relationships, "
        "J. Chem. Inf. Comput. Sci. 43(6), 2003; " + _ECFP,
        "binary fingerprint bits; " + _REPROCESSED,
    ),
    (
        "fontaine_ecfp4",
        "Fontaine_ECFP4/fontaine_ECFP_4.data",
        "78fbf8a5deae15215833af1e1ba84788b3767acfbce2b975263f83e91df96d68",
        "",
        (435, 1024, 2),
        "fontaine_ECFP_4.data",
        "factor Xa inhibitors: F. Fontaine, M. Pastor, I. Zamora, F. Sanz, Anchor-GRIND: "
        "filling the gap between standard 3D QSAR and the GRid-INdependent descriptors, J. "
        "Med. Chem. 48(7), 2005; " + _ECFP,
        "binary fingerprint bits; " + _REPROCESSED,
    ),
    (
        "imagesegmentation",
        "ImageSegmentation/segmentation-normcols.data",
        "491838383afe1cfd6362f41147ec2b9136d1222d4864d37329bfaeb17e0e3958",
        "",
        (2100, 19, 7),
        "segmentation-normcols.data",
        "UCI Image Segmentation (Vision Group, University of Massachusetts, 1990; C. Brodley): "
        "3 × 3 regions of 7 outdoor images",
        "the 2100-instance test split, columns normalised to [0, 1]; only 19 features; "
        + _REPROCESSED,
    ),
    (
        "m1_ecfp4",
        "M1_ECFP4/m1_ECFP_4.data.gz",
        "46619d1e05f384b293011adbbb6311669f24dd7536a72304ae903a96446e3f03",
        "977814894805c023ee454d3bb0041ee6e9be7c135e9301eb8fc357b72b95ee2c",
        (769, 1024, 2),
        "m1_ECFP_4.data",
        "M1 muscarinic receptor ligands (the compound set's source is not stated in the "
        "repository); " + _ECFP,
        "source not documented; imbalanced (608/161); binary fingerprint bits; " + _REPROCESSED,
    ),
    (
        "semeion",
        "Semeion/semeion.data",
        "f62cec3569153610f9e9712b3d10f8fb71a93cccfd34654bdc7d87fa3b552c70",
        "",
        (1593, 256, 10),
        "semeion.data",
        "M. Buscema, MetaNet: the theory of independent judges, Subst. Use Misuse 33(2), 1998 "
        "(UCI Semeion Handwritten Digit, 16 × 16 binary images)",
        "UCI's 10 one-hot label columns turned into one class column; " + _REPROCESSED,
    ),
    (
        "yeastgalactose",
        "YeastGalactose/yeast_Galactose.data",
        "a57e9034cc8ddb57523716427fcf2e58d741ac4341a538ac4307325de5120cea",
        "",
        (205, 80, 4),
        "yeast_Galactose.data",
        "T. Ideker et al., Integrated genomic and proteomic analyses of a systematically "
        "perturbed metabolic network, Science 292, 2001; K. Yeung, M. Medvedovic, R. "
        "Bumgarner, Clustering gene-expression data with repeated measurements, Genome Biol. "
        "4:R34, 2003 (205 genes, 4 GO classes)",
        "imbalanced (83/15/93/14); " + _REPROCESSED,
    ),
]:
    CATALOG.append(
        _read_entry(
            _name,
            f"Extended/{_file}",
            _sha,
            _shape,
            raw_github_url(*_UNIFIED, f"data/{_path}"),
            read_csv_label_last,
            "csv",
            ("comma-separated, no header", "last column = class"),
            f"{_cite}; {_UNIFIED_CITE}",
            url_sha256=_url_sha,
            notes=_EXTRA_EXT + (f"; {_note}" if _note else ""),
        )
    )

for _spec in CATALOG:
    register_dataset(_spec)
