"""LS-CAE: the concrete autoencoder with a Laplacian-score term (Shaham, Lindenbaum,
Svirsky & Kluger, "Deep unsupervised feature selection by discarding nuisance and
correlated features", Neural Networks 152, 2022).

The CAE (:mod:`ufs.methods.cae`) selects features that reconstruct the others, which
discards *correlated* features but may keep *nuisance* features: noise is hard to
reconstruct, so a reconstruction loss rewards selecting it. LS-CAE adds the Laplacian
score of the selected features, computed on a graph built from the selected features
themselves (not from all features, which nuisance features would corrupt), so that the
chosen features must also be smooth over the data's own structure. Per minibatch ``x``
(``b × d``) and concrete samples ``M`` (``k × d``):

    u      = x Mᵀ                                      (the k selected values)
    x̃      = x ⊙ w,  w_f = max_i M_if                   (the features weighted by selection)
    W_ij   = exp(−||x̃_i − x̃_j||² / σ²),  σ = max_i ||x̃_i − x̃_(i)||   (nearest neighbour)
    P      = D⁻¹ W                                      (random-walk matrix)
    L_LS   = −Tr(x̃ᵀ P² x̃) / (b k)                      (Laplacian-score term)
    L_rec  = (1/bd) ||x − f_θ(u)||²
    loss   = L_rec / [L_rec] + L_LS / |[L_LS]| + ρ · max(0, max_f Σ_i softmax(ℓ_i/T)_f − 1)

where ``[·]`` is the current value held constant (each term is scaled to unit size, the
authors' balancing) and the last term is the authors' feature-redundancy penalty: it
fires when the nodes' selection probabilities of one feature add up to more than one,
i.e. when nodes start to choose the same feature (LS-CAE's duplicate-selection rule).
"""

from __future__ import annotations

from ._concrete import ConcreteSelector, TrainResult, check_positive, temperature

__all__ = ["LSConcreteAutoencoder"]


class LSConcreteAutoencoder(ConcreteSelector):
    """LS-CAE feature selection (a ``subset`` method: one network per ``h``).

    Parameters (defaults: the authors' package ``lscae`` 0.0.2)
    ----------
    n_features_to_select : int
        ``k``, the number of concrete nodes.
    n_clusters : ignored
    epochs : int, default 500
    batch_size : int, default 64
        At least 2 (batch norm and the batch's kernel need two samples).
    hidden : int, default 128
        Width of the decoder's two hidden layers: linear (no bias) → batch norm →
        LeakyReLU(0.2), then a linear output of ``d``.
    decoder_lr, selector_lr : float, default 1e-3 and 1e-1
        Adam (β = (0.5, 0.999)) step sizes of the decoder and of the selector's logits,
        both ×0.1 every 100 epochs, never below ``min_lr`` = 1e-5.
    start_temp, min_temp : float, default 10 and 0.01
        Exponential annealing ``T(e) = T_0 (T_B/T_0)^{e/E}`` per epoch ``e`` of ``E``.
    redundancy_penalty : float, default 10
        ``ρ`` of the feature-redundancy penalty (the package's ``fr_penalty``).
    random_state : int or None

    Choices where the package and the paper's model differ, stated and tested:

    * the package divides the noisy logits by the temperature twice (its samples are
      ``softmax((ℓ + g)/T²)``); here once, as the concrete distribution is defined;
    * the package defines the exponential schedule but calls its linear one by default;
      here the exponential one, the CAE's schedule the paper builds on;
    * the package's kernel exponentiates the *squared* distance matrix a second time
      (``exp(−D²/σ²)`` with ``D`` already squared); here the Gaussian kernel
      ``exp(−||x̃_i − x̃_j||²/σ²)`` with ``σ`` the largest nearest-neighbour distance in the
      batch (the package's ``scale_k = 2``: the first neighbour other than the point);
    * its ``laplacian_k`` finds neighbours that its kernel then does not use (the kernel is
      the full batch's); so here too, without the unused parameter;
    * the LS term is divided by the actual batch size (the package divides the last,
      shorter batch by the nominal 64); the learning-rate floor holds for both groups (the
      package floors only the decoder's).

    Duplicate selections: the redundancy penalty discourages them in training; a fit that
    still ends with two nodes on one feature is handled as the CAE's (a duplicate takes its
    most probable free feature, ``degenerate_``, a warning).

    Fitted facts as :class:`~ufs.methods.cae.ConcreteAutoencoder`'s, with ``objective_``
    the per-epoch mean of ``L_rec + L_LS`` (the unscaled terms) and the two terms apart in
    ``reconstruction_history_`` and ``laplacian_history_``.
    """

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        epochs: int = 500,
        batch_size: int = 64,
        hidden: int = 128,
        decoder_lr: float = 1e-3,
        selector_lr: float = 1e-1,
        min_lr: float = 1e-5,
        start_temp: float = 10.0,
        min_temp: float = 0.01,
        redundancy_penalty: float = 10.0,
        random_state: int | None = None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.epochs = epochs
        self.batch_size = batch_size
        self.hidden = hidden
        self.decoder_lr = decoder_lr
        self.selector_lr = selector_lr
        self.min_lr = min_lr
        self.start_temp = start_temp
        self.min_temp = min_temp
        self.redundancy_penalty = redundancy_penalty
        self.random_state = random_state

    def _train(self, X, k: int, gen) -> TrainResult:
        import torch

        check_positive(
            self,
            epochs=self.epochs,
            batch_size=self.batch_size,
            hidden=self.hidden,
            decoder_lr=self.decoder_lr,
            selector_lr=self.selector_lr,
            min_lr=self.min_lr,
            start_temp=self.start_temp,
            min_temp=self.min_temp,
        )
        if not self.redundancy_penalty >= 0:
            raise ValueError(f"redundancy_penalty must be >= 0; got {self.redundancy_penalty}")
        if self.batch_size < 2:  # batch norm and a batch's kernel need two samples
            raise ValueError(f"batch_size must be at least 2; got {self.batch_size}")
        n, d = X.shape
        h = int(self.hidden)
        logits = torch.zeros(k, d, requires_grad=True)  # the package's initialization
        decoder = self._mlp(torch, [k, h, h, d], dropout=0.0, batch_norm=True, gen=gen)
        opt = torch.optim.Adam(
            [
                {"params": decoder.parameters(), "lr": self.decoder_lr},
                {"params": [logits], "lr": self.selector_lr},
            ],
            betas=(0.5, 0.999),
            fused=True,
        )
        base = [self.decoder_lr, self.selector_lr]
        losses, rec_hist, ls_hist = [], [], []
        decoder.train()
        epochs = int(self.epochs)
        for epoch in range(epochs):
            T = temperature(epoch, epochs, self.start_temp, self.min_temp)
            tot = rec_tot = ls_tot = 0.0
            for idx in self._batches(torch, n, int(self.batch_size), gen):
                xb = X[idx]
                b = xb.shape[0]
                M = torch.softmax((logits + self._gumbel(torch, logits.shape, gen)) / T, dim=1)
                rec = torch.mean((decoder(xb @ M.T) - xb) ** 2)
                xt = xb * M.max(dim=0).values
                ls = -self._laplacian_term(torch, xt) / (b * k)
                redundancy = torch.softmax(logits / T, dim=1).sum(dim=0).max() - 1.0
                loss = (
                    rec / rec.detach()
                    + ls / ls.detach().abs().clamp_min(1e-12)
                    + self.redundancy_penalty * torch.clamp(redundancy, min=0.0)
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                r, s = float(rec.detach()), float(ls.detach())
                rec_tot += r * b
                ls_tot += s * b
                tot += (r + s) * b
            losses.append(tot / n)
            rec_hist.append(rec_tot / n)
            ls_hist.append(ls_tot / n)
            # the package's step decay (LambdaLR stepped after each epoch), floored
            factor = 0.1 ** ((epoch + 2) // 100)
            for group, lr in zip(opt.param_groups, base, strict=True):
                group["lr"] = max(lr * factor, self.min_lr)
        with torch.no_grad():
            probs = torch.softmax(logits, dim=1).double().numpy()
        return TrainResult(
            probs=probs,
            losses=losses,
            epochs=epochs,
            histories={"reconstruction": rec_hist, "laplacian": ls_hist},
        )

    @staticmethod
    def _laplacian_term(torch, xt):
        """``Tr(x̃ᵀ P² x̃)`` of a weighted batch ``x̃`` (``b × d``): Gaussian kernel with
        the largest nearest-neighbour distance as its scale, ``P = D⁻¹W``. Dense ``b × b``
        (one minibatch, 64 by default), never ``n × n``."""
        norms = (xt * xt).sum(dim=1)
        sq = (norms[:, None] + norms[None, :] - 2.0 * (xt @ xt.T)).clamp_min(0.0)
        b = sq.shape[0]
        off = sq + torch.diag(torch.full((b,), float("inf")))
        scale2 = off.min(dim=1).values.max().detach().clamp_min(1e-12)
        W = torch.exp(-sq / scale2)
        P = W / W.sum(dim=1, keepdim=True)
        PX = P @ (P @ xt)
        return torch.sum(xt * PX)
