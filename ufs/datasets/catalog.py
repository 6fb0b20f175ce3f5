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
* ``"manual"``: no public copy is known (Mnist4000, 20NG): only a
  copy placed by hand in the mirror works; otherwise the error says where to get it.

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

Size (~800 lines): the registry of benchmark data sets, one entry (loader, shape,
source, citation) per data set — a table, not logic; each loader is hashed separately
into its data set's lineage (:func:`ufs.pipeline.lineage.dataset_code`).
"""

from __future__ import annotations

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
from .registry import DatasetSpec, get_dataset, register_dataset

__all__ = ["CATALOG", "raw_github_url"]

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
        "mnist4000",
        "Mnist4000/Mnist4000.mat",
        (4000, 784, 10),
        ("fsbc",),
        "D. Cai, X. He, J. Han, T. Huang, Graph regularized NMF, IEEE TPAMI 33(8), 2011 "
        "(FSBC [50])",
        "http://www.cad.zju.edu.cn/home/dengcai/Data/MNIST/ (http only, unverified)",
        "which 4000 MNIST digits is not stated; no public pinned copy found",
    ),
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

for _spec in CATALOG:
    register_dataset(_spec)
