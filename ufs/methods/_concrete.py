"""The concrete selector layer and its training loop, shared by the neural selectors
(:mod:`ufs.methods.cae`: CAE and IP-CAE; :mod:`ufs.methods.lscae`: LS-CAE).

A concrete selector of ``k`` nodes over ``d`` features (Abid, Balin & Zou, ICML 2019, §3):
node ``i`` has logits ``ℓ_i ∈ R^d`` and, in training, outputs ``u_i = m_iᵀ x`` with

    m_i = softmax((ℓ_i + g_i) / T),   g_ij = −log(−log U_ij),  U_ij ~ U(ε, 1)      (Eq. 2)

(a sample of the concrete distribution, Maddison et al. 2017); the temperature is annealed
exponentially, ``T(b) = T_0 (T_B / T_0)^{b/B}`` over the ``B`` training steps (CAE §3.1), so
the samples become one-hot and node ``i`` selects ``argmax_j ℓ_ij`` at the end.

PyTorch is the optional ``neural`` extra: this module imports it inside the functions, and
the estimator modules import this one only inside ``fit``; ``import ufs`` never loads it.
Every random choice (initial weights, Gumbel noise, minibatch order, dropout) comes from
one ``torch.Generator`` seeded by ``random_state``; the fit runs in float32 on the CPU with
deterministic algorithms and one thread, so one seed gives one selection on one machine.
One thread: the networks are small (a ``k × d`` selector, hidden layers of 128-320 units),
intra-op threads cost more than they save on them (measured: a loaded 2-core machine made a
3-epoch fit 100× slower with two threads), and the workflow runs one job per core. Adam is
PyTorch's fused kernel (one update for all parameters: about a quarter less CPU per epoch
than the per-tensor loop, ``benchmarks/neural_backend.py``).

What every neural selector records (``fit``): ``objective_`` the per-epoch mean of the
training loss (the convergence figure and MLflow draw it), ``selection_confidence_`` the
mean over nodes of ``max_j softmax(ℓ_i)_j`` (the CAE code's convergence monitor),
``converged_`` whether it reached :data:`CONFIDENCE_TARGET`, ``n_iter_`` the epochs run,
``n_duplicates_`` how many nodes chose a feature an earlier node had chosen, and
``degenerate_`` (duplicates were replaced by a rule, :func:`distinct_selection`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..fit_warnings import DegenerateFitWarning

__all__ = [
    "CONFIDENCE_TARGET",
    "ConcreteSelector",
    "TrainResult",
    "distinct_selection",
    "temperature",
]

#: the CAE code's convergence target: the mean over nodes of the largest selection
#: probability ``softmax(ℓ_i)`` (``StopperCallback.mean_max_target = 0.998``)
CONFIDENCE_TARGET = 0.998
#: the open interval of the uniform draws behind the Gumbel noise (Keras' ``epsilon``)
UNIFORM_EPS = 1e-7


def temperature(step: float, total: float, start: float, end: float) -> float:
    """``T(b) = T_0 (T_B / T_0)^{b/B}`` (CAE §3.1): ``start`` at ``step = 0``, ``end`` at
    ``step = total`` and after."""
    frac = min(max(step / total, 0.0), 1.0) if total > 0 else 1.0
    return float(start * (end / start) ** frac)


def distinct_selection(probs: np.ndarray) -> tuple[np.ndarray, int]:
    """The ``k`` distinct features of a selector whose node ``i`` prefers feature ``j``
    with probability ``probs[i, j]`` (``k × d``), and how many nodes were duplicates.

    A node selects ``argmax_j probs[i, j]`` (CAE §3: "the feature with the largest logit").
    The model does not forbid two nodes the same feature; then fewer than ``k`` distinct
    features are selected. The rule here: nodes keep their argmax in order of decreasing
    confidence (``max_j probs[i, j]``, ties to the lower node); a node whose argmax an
    earlier node already holds takes its most probable feature not yet taken. The
    duplicates' count is returned so that the fit is marked (``degenerate_``): those
    features were chosen by this rule, not by the model.
    """
    P = np.asarray(probs, dtype=np.float64)
    k, d = P.shape
    if k > d:
        raise ValueError(f"{k} nodes cannot select distinct features among {d}")
    first = P.argmax(axis=1)
    duplicates = k - np.unique(first).size
    taken = np.zeros(d, dtype=bool)
    chosen = np.empty(k, dtype=np.int64)
    for i in np.argsort(-P.max(axis=1), kind="stable"):
        j = int(first[i])
        if taken[j]:
            free = np.where(taken, -np.inf, P[i])
            j = int(np.argmax(free))
        taken[j] = True
        chosen[i] = j
    return chosen, int(duplicates)


@dataclass
class TrainResult:
    """What a training run returns: the final selection probabilities (``k × d``,
    ``softmax(ℓ)`` at temperature 1), the per-epoch mean losses, and extra per-epoch
    histories a method records (e.g. LS-CAE's two terms)."""

    probs: np.ndarray
    losses: list[float]
    epochs: int
    histories: dict[str, list[float]] = field(default_factory=dict)
    #: training runs made (the CAE code retrains with twice the epochs when a run ends
    #: below :data:`CONFIDENCE_TARGET`); ``losses`` and ``epochs`` are the last run's
    attempts: int = 1


class ConcreteSelector(UFSSelector):
    """Base of the neural selectors: a ``subset`` method (the network is trained for the
    given ``h = k`` nodes), PyTorch from the ``neural`` extra.

    Subclasses implement :meth:`_train` (the method's model and loss, with
    :mod:`torch`); this class validates, seeds, picks the distinct features and records
    the facts of the fit. ``n_clusters`` is accepted for the workflow's uniform call and
    not used: none of these models sees a number of clusters.
    """

    kind = "subset"
    requires_n_clusters = False
    requires: ClassVar[tuple[str, ...]] = ("torch",)
    install_hint: ClassVar[str] = 'pip install "ufs-bench[neural]"'

    def _fit(self, X: np.ndarray) -> Selection:
        import torch

        k = self._h
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        gen = torch.Generator().manual_seed(seed)
        previous = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
        torch.use_deterministic_algorithms(True)
        torch.set_num_threads(1)
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)  # modules' own initializers (nn.Linear)
                result = self._train(torch.as_tensor(X, dtype=torch.float32), k, gen)
        finally:
            torch.use_deterministic_algorithms(previous[0])
            torch.set_num_threads(previous[1])
        chosen, dup = distinct_selection(result.probs)
        confidence = float(result.probs.max(axis=1).mean())
        self.objective_ = np.asarray(result.losses, dtype=np.float64)
        for name, values in result.histories.items():
            setattr(self, f"{name}_history_", np.asarray(values, dtype=np.float64))
        self.n_iter_ = int(result.epochs)
        self.n_attempts_ = int(result.attempts)
        self.selection_confidence_ = confidence
        self.converged_ = bool(confidence >= CONFIDENCE_TARGET)
        self.n_duplicates_ = dup
        self.degenerate_ = dup > 0
        self.selection_probabilities_ = result.probs
        if dup:
            warnings.warn(
                f"{type(self).__name__}: {dup} of {k} concrete nodes chose a feature another "
                "node had chosen; each took its most probable free feature instead "
                "(fewer distinct features than asked for: the fit is marked degenerate)",
                DegenerateFitWarning,
                stacklevel=3,
            )
        return Selection(order=chosen)

    def _train(self, X, k: int, gen) -> TrainResult:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- pieces every model uses (torch passed in, imported by the caller) ------------
    @staticmethod
    def _gumbel(torch, shape, gen):
        """Standard Gumbel noise ``−log(−log U)``, ``U ~ U(ε, 1)`` (Eq. 2)."""
        u = torch.rand(shape, generator=gen) * (1.0 - UNIFORM_EPS) + UNIFORM_EPS
        return -torch.log(-torch.log(u))

    @staticmethod
    def _batch_sizes(n: int, batch_size: int) -> list[int]:
        """The sizes of an epoch's minibatches: ``batch_size`` each, the last shorter (as
        Keras and PyTorch's loaders cut), and a last piece of one sample joined to the one
        before, since batch norm and a batch's kernel need two."""
        sizes = [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])
        if len(sizes) > 1 and sizes[-1] < 2:
            sizes[-2:] = [sizes[-2] + sizes[-1]]
        return sizes

    @classmethod
    def _batches(cls, torch, n: int, batch_size: int, gen):
        """One epoch's minibatches: a seeded permutation cut at :meth:`_batch_sizes`."""
        return list(torch.randperm(n, generator=gen).split(cls._batch_sizes(n, batch_size)))

    @staticmethod
    def _mlp(torch, sizes: list[int], *, dropout: float, batch_norm: bool, gen) -> Any:
        """``sizes[0] → … → sizes[-1]``: hidden layers linear → (batch norm) → LeakyReLU(0.2)
        → (dropout); the output layer linear. With batch norm the hidden linears have no
        bias (the norm's shift replaces it), as in the LS-CAE code."""
        nn = torch.nn
        layers: list = []
        for a, b in zip(sizes[:-2], sizes[1:-1], strict=True):
            layers.append(nn.Linear(a, b, bias=not batch_norm))
            if batch_norm:
                layers.append(nn.BatchNorm1d(b))
            layers.append(nn.LeakyReLU(0.2))
            if dropout > 0:
                layers.append(_SeededDropout(torch, dropout, gen))
        layers.append(nn.Linear(sizes[-2], sizes[-1]))
        return nn.Sequential(*layers)


def _SeededDropout(torch, p: float, gen):
    """Dropout whose mask is drawn from the fit's generator (``nn.Dropout`` draws from the
    global one)."""

    class SeededDropout(torch.nn.Module):
        def forward(self, x):
            if not self.training:
                return x
            keep = (torch.rand(x.shape, generator=gen) >= p).to(x.dtype)
            return x * keep / (1.0 - p)

    return SeededDropout()


def batch_size_rule(n: int) -> int:
    """The CAE code's default minibatch size, ``max(n // 256, 16)``."""
    return max(n // 256, 16)


def check_positive(est: UFSSelector, **values: float) -> None:
    """``ValueError`` naming the first parameter of ``values`` that is not > 0."""
    for name, v in values.items():
        if not (
            isinstance(v, int | float) and not isinstance(v, bool) and v > 0 and math.isfinite(v)
        ):
            raise ValueError(f"{type(est).__name__}: {name} must be a positive number; got {v!r}")
