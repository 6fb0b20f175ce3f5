"""Built-in methods. Each module holds one estimator; this file registers them.

To add a method: write ``ufs/methods/<name>.py`` with a :class:`ufs.base.UFSSelector`
subclass and add one ``register(...)`` call below with its paper's grid (``grid``, used
by the label-tuned protocol) and its label-free ``defaults``.
"""

from ..method_spec import register
from ._nonneg_spectral import GRID as _GRID_1E6_STEP100
from .cae import ConcreteAutoencoder, IPConcreteAutoencoder
from .dgufs import DGUFS
from .eufs import EUFS
from .fsasl import FSASL
from .fsbc import FSBC
from .golfs import GOLFS
from .kmeans_ufs import KMeansUFS
from .laplacian_score import LaplacianScore
from .lrpfs import LRPFS
from .lscae import LSConcreteAutoencoder
from .mcfs import MCFS
from .ndfs import NDFS
from .nsslfs import NSSLFS
from .reference import AllFeatures, MaxVariance, RandomFeatures
from .rne import RNE
from .rsr import RSR
from .rufs import RUFS
from .sf2sog import SF2SOG
from .sogfs import SOGFS
from .spcafs import SPCAFS
from .spec import SPEC
from .udfs import UDFS
from .urafs import URAFS

__all__ = [
    "AllFeatures",
    "ConcreteAutoencoder",
    "DGUFS",
    "EUFS",
    "FSASL",
    "FSBC",
    "GOLFS",
    "IPConcreteAutoencoder",
    "KMeansUFS",
    "LaplacianScore",
    "LRPFS",
    "LSConcreteAutoencoder",
    "MCFS",
    "MaxVariance",
    "NDFS",
    "NSSLFS",
    "RNE",
    "RSR",
    "RUFS",
    "RandomFeatures",
    "SF2SOG",
    "SOGFS",
    "SPCAFS",
    "SPEC",
    "UDFS",
    "URAFS",
]

_DECADES_3 = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]
_DECADES_6 = [10.0**e for e in range(-6, 7)]

# -- references (no paper) ---------------------------------------------------------------
register("all_features", AllFeatures, reference="All features (no selection)", role="reference")
# a distribution, not one draw: evaluation.reference_draws seeded draws
register(
    "random", RandomFeatures, reference="Uniformly random features", role="reference", draws="draw"
)
register("max_variance", MaxVariance, reference="Largest raw variance", role="reference")

# -- the five seed papers ----------------------------------------------------------------
register(
    "kmeans_ufs",
    KMeansUFS,
    grid={},  # §V-B: "no adjustable parameters"; μ0 = 0.1, ρ = 1.05 fixed
    fixed={"solver": "admm"},
    reference="Sun, Ding, Fan. K-means Derived Unsupervised Feature Selection using Improved ADMM",
)
register(
    "kmeans_ufs_exact",
    KMeansUFS,
    fixed={"solver": "exact"},
    role="variant",
    variant_of="kmeans_ufs",
    reference="Global optimum of K-means UFS model (8) (see KMeansUFS docstring)",
)
register(
    "dgufs",
    DGUFS,
    grid={"alpha": [1e1, 1e2, 1e3, 1e4, 1e5], "beta": [0.1, 0.3, 0.5, 0.7, 0.9]},  # §5.3
    defaults={"alpha": 1e3, "beta": 0.5},  # middle of the paper's grid (label-free)
    # the class defaults follow DGUFS.m: γ = 0.005, speedUp, order Z, Y, L, M, [0, 1] input
    reference="Guo, Zhu. Dependence Guided Unsupervised Feature Selection. AAAI 2018",
)
register(
    "golfs",
    GOLFS,
    # §4: every parameter from {1e-6, ..., 1e6}; the full product (13^5) is infeasible,
    # experiment configs thin it. γ is the orthogonality penalty (fixed large in the paper).
    grid={"lam": _DECADES_6, "alpha": _DECADES_6, "beta": _DECADES_6, "kappa": _DECADES_6},
    defaults={"lam": 0.1, "alpha": 1.0, "beta": 100.0, "gamma": 100.0, "kappa": 1.0},
    reference="Xing, Wan, Wen, Zhong. GOLFS (Computational Statistics, 2023)",
)
register(
    "spcafs",
    SPCAFS,
    grid={"gamma": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]},  # §6.1.2; p = 1, m = c - 1
    # label-free γ = 0.01 λ_max(S_t): the paper's fixed 1e4 (§6.4.1) collapses W
    # on 18 of the 27 z-scored mirror data sets (docs/methods.md, benchmarks/spcafs_gamma.py)
    defaults={"gamma": "auto", "p": 1.0},
    reference="Li, Nie, Bian, Li. Sparse PCA via l2,p-Norm Regularization for UFS (TPAMI 2021)",
)
register(
    "spcafs_raw",
    SPCAFS,
    grid={"gamma": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]},
    defaults={"gamma": "auto", "p": 1.0},  # scale-free: raw data's λ_max spans 4 to 5e8
    # the other reading of the paper's "normalized data" (§5.2): S_t = XᵀHX of the data as
    # given, centred only (Eq. 18); see the SPCAFS docstring and docs/methods.md
    fixed={"input_space": "raw"},
    role="variant",
    variant_of="spcafs",
    reference="SPCAFS on the data as given, centred only (Li et al. TPAMI 2021, Eq. 18)",
)
register(
    "fsbc",
    FSBC,
    grid={"lambda_scale": _DECADES_3, "tau": _DECADES_3},  # λ = n²·{1e-3..1e3}, τ (§4.3)
    defaults={"lambda_scale": 1.0, "tau": 1.0},
    reference="Zhou, Chen, Fan, Du, Shen, Li. UFS for balanced clustering (KBS 2020)",
)
register(
    "fsbc_nobal",
    FSBC,
    grid={"tau": _DECADES_3},
    defaults={"tau": 1.0},
    fixed={"lambda_scale": 0.0},
    role="variant",
    variant_of="fsbc",
    reference="FSBC without the balance term (λ = 0), Zhou et al. 2020 §4.2",
)

# -- baselines ---------------------------------------------------------------------------
register(
    "laplacian_score",
    LaplacianScore,
    defaults={"n_neighbors": 5, "weight": "heat"},
    reference="He, Cai, Niyogi. Laplacian Score for Feature Selection. NIPS 2005",
)
register(
    "spec",
    SPEC,
    # the three ranking functions of the paper; phi3's k = the number of clusters
    grid={"style": ["phi1", "phi2", "phi3"]},
    defaults={"style": "phi3", "n_neighbors": 5, "weight": "heat"},
    reference="Zhao, Liu. Spectral Feature Selection for Supervised and Unsupervised Learning. "
    "ICML 2007",
)
register(
    "spec_skfeature",
    SPEC,
    # scikit-feature's SPEC: its default style (phi2) in its own (reversed) order
    defaults={"style": "phi2", "order": "skfeature", "n_neighbors": 5, "weight": "heat"},
    reference="SPEC as scikit-feature ranks it (phi2, descending)",
    role="variant",
    variant_of="spec",
)
register(
    "mcfs",
    MCFS,
    # ridge and unit-norm a_k as Cai's SR.m; ridge=0, coef_normalization="none" = paper
    defaults={
        "n_neighbors": 5,
        "weight": "heat",
        "lars_method": "lasso",
        "ridge": 1e-3,
        "coef_normalization": "unit",
    },
    reference="Cai, Zhang, He. Unsupervised Feature Selection for Multi-Cluster Data. KDD 2010",
)
register(
    "udfs",
    UDFS,
    grid={"gamma": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]},
    defaults={"gamma": 1.0, "lam": 1e-3, "n_neighbors": 5},
    reference="Yang, Shen, Ma, Huang, Zhou. l2,1-Norm Regularized Discriminative FS (IJCAI 2011)",
)
register(
    "ndfs",
    NDFS,
    grid={"alpha": _GRID_1E6_STEP100, "beta": _GRID_1E6_STEP100},
    defaults={"alpha": 1.0, "beta": 1.0},
    fixed={"gamma": 1e8},
    reference="Li, Yang, Liu, Zhou, Lu. UFS Using Nonnegative Spectral Analysis (AAAI 2012)",
)
register(
    "rufs",
    RUFS,
    grid={"nu": _GRID_1E6_STEP100, "alpha": _GRID_1E6_STEP100, "beta": _GRID_1E6_STEP100},
    defaults={"nu": 1.0, "alpha": 1.0, "beta": 1.0},
    reference="Qian, Zhai. Robust Unsupervised Feature Selection (IJCAI 2013)",
)
register(
    "eufs",
    EUFS,
    grid={"alpha": _GRID_1E6_STEP100, "beta": _GRID_1E6_STEP100},
    defaults={"alpha": 1e-2, "beta": 1.0},
    reference="Wang, Tang, Liu. Embedded Unsupervised Feature Selection (AAAI 2015)",
)
register(
    "rsr",
    RSR,
    grid={"lam": _DECADES_3},
    defaults={"lam": 1.0},
    reference="Zhu, Zuo, Zhang, Hu, Shiu. UFS by regularized self-representation (PR 2015)",
)
register(
    "nsslfs",
    NSSLFS,
    # FSBC §4.3 tunes it "as suggested in [its] paper", whose text could not be read here:
    # λ over decades 1e-3..1e3 (FSBC's range for its own τ); β = 1 fixed (only λ²β matters)
    grid={"lam": _DECADES_3},
    defaults={"lam": 1.0},
    reference="Zheng, Yan, Yang. Robust UFS by nonnegative sparse subspace learning "
    "(Neurocomputing 2019)",
)
register(
    "rne",
    RNE,
    # SPCAFS §6.1.2: k = 5, every parameter over {1e-6, 1e-4, ..., 1e6}; α = 1e3 and m = h
    # are the authors' RNE_obj.m (α fixed there)
    grid={"alpha": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]},
    defaults={"alpha": 1e3, "n_neighbors": 5},
    reference="Liu, Ye, Li, Wang, Gao. Robust neighborhood embedding for UFS (KBS 2020)",
)
register(
    "lrpfs_ma2024",
    LRPFS,
    # Not "lrpfs": FSBC's LRPFS [53] (the published tables' "lrpfs") is a different method
    # (Zheng et al. 2018), not implemented; see lrpfs.py. The Axioms paper's grid could not
    # be read: decades 1e-3..1e3 (FSBC §4.3's range for its own τ) around the authors'
    # usage example α = 1e3, λ = 0.1 (the defaults).
    grid={"alpha": _DECADES_3, "lam": _DECADES_3},
    defaults={"alpha": 1e3, "lam": 0.1, "n_neighbors": 5},
    reference="Ma, Huang, Li, Wang. UFS with Latent Relationship Penalty Term (Axioms 2024)",
)
register(
    "fsasl",
    FSASL,
    # the authors' experiment script (fs_unsup_fsasl_11_11_1): λ1 = 1, λ2, λ3 over
    # 10^-5..10^5, SLEPreg 0.01, Localk 5, 50 iterations (FSBC §4.3: "as suggested")
    grid={"lambda2": [10.0**e for e in range(-5, 6)], "lambda3": [10.0**e for e in range(-5, 6)]},
    defaults={"lambda1": 1.0, "lambda2": 1.0, "lambda3": 1.0, "sparsity": 0.01, "n_neighbors": 5},
    reference="Du, Shen. Unsupervised Feature Selection with Adaptive Structure Learning (KDD 2015)",
)
register(
    "sogfs",
    SOGFS,
    grid={"gamma": _DECADES_3},
    # the authors' code has no γ default; γ ≥ 1 selects only c features (docs/methods.md)
    defaults={"gamma": 1.0},
    reference="Nie, Zhu, Li. UFS with Structured Graph Optimization (AAAI 2016)",
)
register(
    "urafs",
    URAFS,
    # FSBC §4.3 tunes it "as suggested in [its] paper"; the paper's grid could not be read
    # here: λ, α, β over decades 1e-3..1e3 (FSBC's range for its own τ), middle as default
    grid={"lam": _DECADES_3, "alpha": _DECADES_3, "beta": _DECADES_3},
    defaults={"lam": 1.0, "alpha": 1.0, "beta": 1.0, "n_neighbors": 5},
    reference="Li, Zhang, Zhang, Liu, Nie. Generalized uncorrelated regression with adaptive "
    "graph for UFS (TNNLS 2019)",
)
register(
    "sf2sog",
    SF2SOG,
    grid={
        "lam": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6],
        "gamma": [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6],
    },
    defaults={"lam": 1.0, "gamma": 1.0},
    reference="Wang, Zhang, Bian, Wang, Nie, Li. Sparse and Flexible Projections for UFS (TKDE 2023)",
)

# -- neural selectors (the optional ``neural`` extra: PyTorch, imported inside fit) ---------
# No grid: neither paper tunes a parameter of the model per data set; the training budget
# (epochs, batch size) is each paper's code's, written here so that it is part of the
# registry's record of the method. A fit over jobs.fit_budget_seconds is "budget exceeded".
register(
    "cae",
    ConcreteAutoencoder,
    # one run of the code's 300 epochs: its retraining rule (up to 5 runs, each with twice
    # the epochs) is the code's, not the paper's, and on digits its 9 300 epochs (~0.12
    # CPU-s each) pass the 600 CPU-s fit budget; an unconcentrated end is marked (†)
    defaults={"epochs": 300, "batch_size": None, "tryout_limit": 1},
    reference="Abid, Balin, Zou. Concrete Autoencoders: Differentiable Feature Selection and "
    "Reconstruction. ICML 2019",
)
register(
    "ipcae",
    IPConcreteAutoencoder,
    defaults={"epochs": 300, "batch_size": None, "tryout_limit": 1},
    reference="Nilsson, Wijk, Gutha, Englesson, Hotti, Saccardi, Kviman, Lagergren, Vinuesa, "
    "Azizpour. Indirectly Parameterized Concrete Autoencoders. ICML 2024",
)
register(
    "lscae",
    LSConcreteAutoencoder,
    defaults={"epochs": 500, "batch_size": 64},
    reference="Shaham, Lindenbaum, Svirsky, Kluger. Deep unsupervised feature selection by "
    "discarding nuisance and correlated features. Neural Networks 2022",
)

# Methods from outside the package: the installed packages' ``ufs.methods`` entry
# points, and a workflow job's config methods given by import path (ufs.plugins)
from ..plugins import load_entry_points as _load_entry_points  # noqa: E402
from ..plugins import load_environment as _load_environment  # noqa: E402

_load_entry_points()
_load_environment()
