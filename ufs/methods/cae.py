"""Concrete Autoencoder (Abid, Balin & Zou, "Concrete Autoencoders: Differentiable Feature
Selection and Reconstruction", ICML 2019) and its indirectly parameterized form IP-CAE
(Nilsson, Wijk, Gutha et al., "Indirectly Parameterized Concrete Autoencoders", ICML 2024).

The model (CAE §3): an encoder that is a concrete selector layer of ``k = h`` nodes
(:mod:`ufs.methods._concrete`, Eq. 2) and a decoder ``f_θ`` that reconstructs all ``d``
features from the ``k`` selected values; both trained on the mean squared reconstruction
error ``(1/nd) Σ ||x − f_θ(Mx)||²`` (Eq. 1 relaxed) with Adam, while the temperature falls
from ``T_0`` to ``T_B`` (§3.1). At the end node ``i`` selects ``argmax_j ℓ_ij``.

IP-CAE (§4 of its paper): the same model, but the logits are not free parameters: node
``i``'s logits are ``ℓ_i = W ψ_i + b`` with a learned embedding ``ψ_i ∈ R^e`` per node and
one linear map ``W ∈ R^{d×e}``, ``b ∈ R^d`` shared by the nodes. The shared map couples the
nodes' updates (the gradient of ``ℓ`` passes through ``W Wᵀ``), which the authors find
removes the CAE's duplicate selections and its unstable joint optimization.
"""

from __future__ import annotations

import numpy as np

from ._concrete import (
    CONFIDENCE_TARGET,
    ConcreteSelector,
    TrainResult,
    batch_size_rule,
    check_positive,
    temperature,
)

__all__ = ["ConcreteAutoencoder", "IPConcreteAutoencoder"]


class ConcreteAutoencoder(ConcreteSelector):
    """Concrete Autoencoder feature selection (a ``subset`` method: one network per ``h``).

    Parameters (defaults: the authors' code, ``concrete_autoencoder`` 0.0.3, and its
    README's decoder)
    ----------
    n_features_to_select : int
        ``k``, the number of concrete nodes (= selected features).
    n_clusters : ignored
        Accepted for the workflow's uniform call; the model sees no clusters.
    epochs : int, default 300
        Training epochs of the first attempt (``num_epochs``).
    batch_size : int or None
        ``None``: the code's rule ``max(n // 256, 16)``.
    learning_rate : float, default 1e-3
        Adam's step (Keras' defaults otherwise: β = (0.9, 0.999), ε = 1e-7).
    start_temp, min_temp : float, default 10 and 0.1
        ``T_0`` and ``T_B`` of the exponential annealing, stepped once per minibatch as the
        code does (``T ← max(T_B, αT)``, ``α = (T_B/T_0)^{1/B}``, ``B`` the run's steps).
    hidden : tuple of int, default (320, 320)
        Decoder hidden widths: linear → LeakyReLU(0.2) → dropout per hidden layer, then a
        linear output of ``d`` (the README's MNIST decoder).
    dropout : float, default 0.1
    tryout_limit : int, default 5
        The code's retraining rule: a run that ends with a mean largest selection
        probability below 0.998 (:data:`~ufs.methods._concrete.CONFIDENCE_TARGET`) is
        repeated from scratch with twice the epochs, at most ``tryout_limit`` runs.
    random_state : int or None
        Seeds weights, Gumbel noise, minibatches and dropout (one ``torch.Generator``).

    Duplicate selections. The CAE does not prevent two nodes from choosing the same feature
    (its code returns the repeated index). The estimator returns ``h`` distinct features
    by :func:`~ufs.methods._concrete.distinct_selection` (a duplicate node takes its most
    probable free feature), warns, and sets ``degenerate_`` with ``n_duplicates_``.

    Fitted facts: ``objective_`` (per-epoch mean reconstruction MSE of the last run),
    ``n_iter_`` (its epochs), ``n_attempts_``, ``selection_confidence_``, ``converged_``
    (confidence ≥ 0.998 after the last run: ``False`` is a fit that did not converge, †),
    ``selection_probabilities_`` (``softmax(ℓ)``, ``k × d``).

    Input: the standardized matrix (the paper z-scores its data; so does the workflow).
    """

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        epochs: int = 300,
        batch_size: int | None = None,
        learning_rate: float = 1e-3,
        start_temp: float = 10.0,
        min_temp: float = 0.1,
        hidden: tuple[int, ...] = (320, 320),
        dropout: float = 0.1,
        tryout_limit: int = 5,
        random_state: int | None = None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.start_temp = start_temp
        self.min_temp = min_temp
        self.hidden = hidden
        self.dropout = dropout
        self.tryout_limit = tryout_limit
        self.random_state = random_state

    # -- the selector's logits: free parameters (CAE) ---------------------------------
    def _logit_params(self, torch, k: int, d: int, gen) -> list:
        """The trainable tensors behind the logits: one ``k × d`` matrix, Glorot-normal
        as in the code (``glorot_normal``: std ``sqrt(2 / (k + d))``)."""
        L = torch.randn(k, d, generator=gen) * np.sqrt(2.0 / (k + d))
        return [L.requires_grad_()]

    def _logits(self, params: list):
        return params[0]

    def _check(self) -> None:
        check_positive(
            self,
            epochs=self.epochs,
            learning_rate=self.learning_rate,
            start_temp=self.start_temp,
            min_temp=self.min_temp,
            tryout_limit=self.tryout_limit,
        )
        if self.batch_size is not None:
            check_positive(self, batch_size=self.batch_size)
        if not 0 <= self.dropout < 1:
            raise ValueError(
                f"{type(self).__name__}: dropout must be in [0, 1); got {self.dropout}"
            )

    def _train(self, X, k: int, gen) -> TrainResult:
        import torch

        self._check()
        n, d = X.shape
        batch = int(self.batch_size or batch_size_rule(n))
        epochs = int(self.epochs)
        for attempt in range(1, int(self.tryout_limit) + 1):
            params = self._logit_params(torch, k, d, gen)
            decoder = self._mlp(
                torch, [k, *self.hidden, d], dropout=self.dropout, batch_norm=False, gen=gen
            )
            opt = torch.optim.Adam(
                [*params, *decoder.parameters()], lr=self.learning_rate, eps=1e-7, fused=True
            )
            steps = epochs * len(self._batch_sizes(n, batch))
            step, losses = 0, []
            decoder.train()
            for _ in range(epochs):
                total = 0.0
                for idx in self._batches(torch, n, batch, gen):
                    step += 1  # the code updates T before each use: T_1 = αT_0
                    T = temperature(step, steps, self.start_temp, self.min_temp)
                    logits = self._logits(params)
                    M = torch.softmax((logits + self._gumbel(torch, logits.shape, gen)) / T, dim=1)
                    xb = X[idx]
                    loss = torch.mean((decoder(xb @ M.T) - xb) ** 2)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += float(loss.detach()) * idx.numel()
                losses.append(total / n)
            with torch.no_grad():
                probs = torch.softmax(self._logits(params), dim=1).double().numpy()
            if probs.max(axis=1).mean() >= CONFIDENCE_TARGET:
                break
            if attempt < self.tryout_limit:
                epochs *= 2
        return TrainResult(probs=probs, losses=losses, epochs=epochs, attempts=attempt)


class IPConcreteAutoencoder(ConcreteAutoencoder):
    """IP-CAE: the Concrete Autoencoder with indirectly parameterized logits
    ``ℓ_i = W ψ_i + b`` (Nilsson et al. 2024, §4; ``IP_weights = "shared"``, with bias,
    random initialization: the authors' defaults).

    Everything else is :class:`ConcreteAutoencoder`'s (decoder, Adam, annealing, the
    distinct-selection rule), so the two differ only in the parameterization the paper
    studies. Choices, stated: the embedding width ``embedding_dim`` is free in the paper;
    the default ``None`` takes ``min(d, 256)``, so that ``W`` stays ``d × 256`` on data with
    10⁴-10⁵ features. ``tryout_limit`` defaults to 1: the paper reports that IP-CAE needs
    no retraining, and the retraining rule is the CAE code's, not part of either model.
    ψ is standard normal; ``W`` and ``b`` take PyTorch's ``nn.Linear`` initialization
    (uniform in ``±1/√e``), drawn from the fit's generator.
    """

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        epochs: int = 300,
        batch_size: int | None = None,
        learning_rate: float = 1e-3,
        start_temp: float = 10.0,
        min_temp: float = 0.1,
        hidden: tuple[int, ...] = (320, 320),
        dropout: float = 0.1,
        tryout_limit: int = 1,
        embedding_dim: int | None = None,
        random_state: int | None = None,
    ):
        super().__init__(
            n_features_to_select,
            n_clusters,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            start_temp=start_temp,
            min_temp=min_temp,
            hidden=hidden,
            dropout=dropout,
            tryout_limit=tryout_limit,
            random_state=random_state,
        )
        self.embedding_dim = embedding_dim

    def _logit_params(self, torch, k: int, d: int, gen) -> list:
        e = int(self.embedding_dim or min(d, 256))
        check_positive(self, embedding_dim=e)
        bound = 1.0 / np.sqrt(e)
        psi = torch.randn(k, e, generator=gen)
        W = (torch.rand(d, e, generator=gen) * 2 - 1) * bound
        b = (torch.rand(d, generator=gen) * 2 - 1) * bound
        return [p.requires_grad_() for p in (psi, W, b)]

    def _logits(self, params: list):
        psi, W, b = params
        return psi @ W.T + b
