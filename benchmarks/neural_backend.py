"""Concrete Autoencoder training step in PyTorch vs JAX on one CPU thread ("Neural backend"; not a test).

    python benchmarks/neural_backend.py [--epochs 20] [--backends torch jax] [--cases digits wide]
                                        [--seed 0] [--no-scan]

Which automatic-differentiation library the neural selectors (Concrete Autoencoder family:
CAE, LS-CAE, IP-CAE) should use as an optional extra. The same model and optimiser in both:

* selector: ``k`` concrete nodes with logits ``L`` (k x d), one Gumbel draw per node and step
  (shared by the batch, as in the CAE authors' Keras layer), ``m = softmax((L + G) / T)``
  over the features, ``u = X_batch @ m.T``; ``T`` annealed from 10 to 0.01 exponentially
  over the epochs;
* decoder: Linear k->320, LeakyReLU(0.2), Linear 320->320, LeakyReLU(0.2), Linear 320->d;
* loss: mean squared error over batch and features; Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8),
  ``torch.optim.Adam`` in PyTorch (``torch``: its default, a per-parameter loop on CPU, as the
  LS-CAE/IP-CAE code uses it; ``torch-fused``: ``fused=True``) and the same update written by
  hand in JAX (no optax);
* float32, one thread: ``OMP/MKL/OPENBLAS_NUM_THREADS=1`` and
  ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`` set before
  any import, ``torch.set_num_threads(1)``; the table's CPU/wall column shows whether it held;
* identical initial parameters (drawn with NumPy from ``--seed``: logits N(0, 2/(k+d)), the
  decoder as ``torch.nn.Linear``'s default U(+-1/sqrt(fan_in))), a reshuffle per epoch from
  the same seed, the last partial batch kept; the Gumbel noise comes from each library's
  own generator (seeded), so the losses agree only roughly.

Cases: ``digits`` is scikit-learn's digits (1797 x 64, z-scored), k = 10, batch 16 (the CAE
authors' rule max(n // 256, 16)); ``wide`` is synthetic N(0, 1) data, n = 1000, d = 2000,
k = 50, batch 64.

Timing: one warm-up epoch, then ``--epochs`` timed epochs; median wall and CPU seconds per
epoch (``time.process_time``, all threads). JAX rows: ``jax`` calls a jit-compiled step per
batch (as a PyTorch loop does); ``jax-scan`` runs an epoch's full batches in one compiled
``lax.scan`` (the idiomatic fast form; same step function). JAX's compile time (both batch
shapes, ahead of time via ``.lower().compile()``) is excluded from the epochs and reported
in its own column. A library that is not installed is skipped with a note. Not imported by
the ``ufs`` package.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time

THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    # the second item has no leading dashes: XLA ignores it (an unknown --flag is fatal)
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
HIDDEN = 320
SLOPE = 0.2
LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8
T_START, T_END = 10.0, 0.01
CASES = {
    # name: (n, d, k, batch); digits' n and d come from the data set
    "digits": (1797, 64, 10, 16),
    "wide": (1000, 2000, 50, 64),
}


def load_case(name: str, seed: int):
    import numpy as np

    n, d, k, batch = CASES[name]
    if name == "digits":
        from sklearn.datasets import load_digits

        X = load_digits().data.astype(np.float64)
        sd = X.std(0)
        X = (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)
    else:
        X = np.random.default_rng(seed + 1).standard_normal((n, d))
    return X.astype(np.float32), k, batch


def init_params(d: int, k: int, seed: int) -> dict:
    """NumPy float32 parameters; decoder weights stored (in, out)."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def linear(fan_in, fan_out):
        b = 1.0 / np.sqrt(fan_in)
        return (
            rng.uniform(-b, b, (fan_in, fan_out)).astype(np.float32),
            rng.uniform(-b, b, fan_out).astype(np.float32),
        )

    p = {"logits": (rng.standard_normal((k, d)) * np.sqrt(2.0 / (k + d))).astype(np.float32)}
    for i, (a, b) in enumerate([(k, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, d)]):
        p[f"W{i}"], p[f"b{i}"] = linear(a, b)
    return p


def temperatures(epochs: int) -> list[float]:
    """Warm-up epoch first, then ``epochs`` timed ones, annealed 10 -> 0.01."""
    total = epochs + 1
    return [T_START * (T_END / T_START) ** (e / max(total - 1, 1)) for e in range(total)]


def batches(n: int, batch: int, rng):
    perm = rng.permutation(n)
    return [perm[i : i + batch] for i in range(0, n, batch)]


def clock():
    return time.perf_counter(), time.process_time()


def summarize(walls, cpus, losses, compile_s=None):
    return {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "ratio": sum(cpus) / sum(walls),
        "loss": losses[-1],
        "compile": compile_s,
    }


def run_torch(X, k, batch, epochs, seed, fused=False):
    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    n, d = X.shape
    p0 = init_params(d, k, seed)

    class CAE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.logits = torch.nn.Parameter(torch.from_numpy(p0["logits"]))
            self.dec = torch.nn.Sequential(
                torch.nn.Linear(k, HIDDEN),
                torch.nn.LeakyReLU(SLOPE),
                torch.nn.Linear(HIDDEN, HIDDEN),
                torch.nn.LeakyReLU(SLOPE),
                torch.nn.Linear(HIDDEN, d),
            )
            with torch.no_grad():
                for i, layer in enumerate(self.dec[::2]):
                    layer.weight.copy_(torch.from_numpy(p0[f"W{i}"].T.copy()))
                    layer.bias.copy_(torch.from_numpy(p0[f"b{i}"]))

        def forward(self, xb, temp):
            u01 = torch.rand(self.logits.shape, generator=gen).clamp_(1e-20, 1.0)
            gumbel = -torch.log(-torch.log(u01))
            m = torch.softmax((self.logits + gumbel) / temp, dim=1)
            return self.dec(xb @ m.T)

    model = CAE()
    opt = torch.optim.Adam(
        model.parameters(), lr=LR, betas=(BETA1, BETA2), eps=EPS, fused=fused or None
    )
    Xt = torch.from_numpy(X)
    rng = np.random.default_rng(seed)
    walls, cpus, losses = [], [], []
    for epoch, temp in enumerate(temperatures(epochs)):
        w0, c0 = clock()
        ep_losses = []
        for idx in batches(n, batch, rng):
            xb = Xt[torch.from_numpy(idx)]
            loss = torch.nn.functional.mse_loss(model(xb, temp), xb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ep_losses.append(loss.detach())
        mean_loss = float(torch.stack(ep_losses).mean())
        w1, c1 = clock()
        if epoch:  # epoch 0 is the warm-up
            walls.append(w1 - w0)
            cpus.append(c1 - c0)
            losses.append(mean_loss)
    return {"torch-fused" if fused else "torch": summarize(walls, cpus, losses)}


def run_jax(X, k, batch, epochs, seed, scan=True):
    import jax
    import jax.numpy as jnp
    import numpy as np

    n, d = X.shape
    params = {key: jnp.asarray(v) for key, v in init_params(d, k, seed).items()}

    def loss_fn(p, xb, key, temp):
        gumbel = jax.random.gumbel(key, p["logits"].shape, dtype=jnp.float32)
        m = jax.nn.softmax((p["logits"] + gumbel) / temp, axis=1)
        h = xb @ m.T
        h = jax.nn.leaky_relu(h @ p["W0"] + p["b0"], SLOPE)
        h = jax.nn.leaky_relu(h @ p["W1"] + p["b1"], SLOPE)
        out = h @ p["W2"] + p["b2"]
        return jnp.mean((out - xb) ** 2)

    def adam(p, state, grads):
        mu, nu, t = state
        t = t + 1
        mu = jax.tree_util.tree_map(lambda m, g: BETA1 * m + (1 - BETA1) * g, mu, grads)
        nu = jax.tree_util.tree_map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, nu, grads)
        tf = t.astype(jnp.float32)
        step_size = LR / (1 - BETA1**tf)
        sqrt_bc2 = jnp.sqrt(1 - BETA2**tf)
        p = jax.tree_util.tree_map(
            lambda w, m, v: w - step_size * m / (jnp.sqrt(v) / sqrt_bc2 + EPS), p, mu, nu
        )
        return p, (mu, nu, t)

    def step(p, state, Xd, idx, key, temp):
        key, sub = jax.random.split(key)
        xb = Xd[idx]
        loss, grads = jax.value_and_grad(loss_fn)(p, xb, sub, temp)
        p, state = adam(p, state, grads)
        return p, state, key, loss

    def epoch_scan(p, state, Xd, idx_mat, key, temp):
        def body(carry, idx):
            p, state, key = carry
            p, state, key, loss = step(p, state, Xd, idx, key, temp)
            return (p, state, key), loss

        (p, state, key), losses = jax.lax.scan(body, (p, state, key), idx_mat)
        return p, state, key, losses

    def fresh():
        """Copies of the initial parameters and Adam state (the steps donate their buffers)."""
        p = jax.tree_util.tree_map(jnp.array, params)
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        s = (zeros, jax.tree_util.tree_map(jnp.zeros_like, params), jnp.zeros((), jnp.int32))
        return p, s, jax.random.key(seed)

    Xd = jnp.asarray(X)
    n_full, rest = divmod(n, batch)
    temp0 = jnp.float32(T_START)

    def run_epochs(one_epoch):
        state = fresh()
        rng = np.random.default_rng(seed)
        walls, cpus, losses = [], [], []
        for epoch, temp in enumerate(temperatures(epochs)):
            w0, c0 = clock()
            state, ep_losses = one_epoch(state, batches(n, batch, rng), jnp.float32(temp))
            mean_loss = float(jnp.mean(ep_losses))
            jax.block_until_ready(state)
            w1, c1 = clock()
            if epoch:  # epoch 0 is the warm-up
                walls.append(w1 - w0)
                cpus.append(c1 - c0)
                losses.append(mean_loss)
        return walls, cpus, losses

    out = {}
    # per-step jit, compiled ahead of time for both batch shapes and timed on its own
    p, s, key = fresh()
    jstep = jax.jit(step, donate_argnums=(0, 1, 4))
    compiled, compile_s = {}, {}
    for b in {batch} | ({rest} if rest else set()):
        w0, c0 = clock()
        compiled[b] = jstep.lower(p, s, Xd, jnp.zeros(b, jnp.int32), key, temp0).compile()
        w1, c1 = clock()
        compile_s[b] = (w1 - w0, c1 - c0)

    def per_step_epoch(state, idx_list, temp):
        p, s, key = state
        ep_losses = []
        for idx in idx_list:
            p, s, key, loss = compiled[len(idx)](p, s, Xd, jnp.asarray(idx, jnp.int32), key, temp)
            ep_losses.append(loss)
        return (p, s, key), jnp.stack(ep_losses)

    compile_total = tuple(sum(c[i] for c in compile_s.values()) for i in range(2))
    out["jax"] = summarize(*run_epochs(per_step_epoch), compile_total)

    if scan:
        p, s, key = fresh()
        w0, c0 = clock()
        jscan = jax.jit(epoch_scan, donate_argnums=(0, 1, 4))
        idx_mat0 = jnp.zeros((n_full, batch), jnp.int32)
        compiled_scan = jscan.lower(p, s, Xd, idx_mat0, key, temp0).compile()
        # the partial last batch goes through the per-step executable of its shape
        w1, c1 = clock()
        extra_w, extra_c = compile_s.get(rest, (0.0, 0.0))
        compile_scan = (w1 - w0 + extra_w, c1 - c0 + extra_c)

        def scan_epoch(state, idx_list, temp):
            p, s, key = state
            idx_mat = jnp.asarray(np.stack(idx_list[:n_full]), jnp.int32)
            p, s, key, losses = compiled_scan(p, s, Xd, idx_mat, key, temp)
            if rest:
                idx = jnp.asarray(idx_list[-1], jnp.int32)
                p, s, key, loss = compiled[rest](p, s, Xd, idx, key, temp)
                losses = jnp.concatenate([losses, loss[None]])
            return (p, s, key), losses

        out["jax-scan"] = summarize(*run_epochs(scan_epoch), compile_scan)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20, help="timed epochs after one warm-up")
    ap.add_argument("--backends", nargs="+", default=["torch", "jax"], choices=["torch", "jax"])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-scan", action="store_true", help="skip the jax-scan rows")
    args = ap.parse_args(argv)
    os.environ.update(THREAD_ENV)  # before NumPy, PyTorch or JAX is first imported

    import importlib.metadata as md
    import importlib.util

    notes, versions = [], {}
    for name in args.backends:
        if importlib.util.find_spec(name) is None:
            notes.append(f"{name}: not installed, skipped")
        else:
            dist = {"torch": "torch", "jax": "jaxlib"}[name]
            versions[name] = md.version(dist)

    rows = []
    for case in args.cases:
        X, k, batch = load_case(case, args.seed)
        steps = -(-X.shape[0] // batch)
        for name in versions:
            if name == "torch":
                res = run_torch(X, k, batch, args.epochs, args.seed)
                res |= run_torch(X, k, batch, args.epochs, args.seed, fused=True)
            else:
                res = run_jax(X, k, batch, args.epochs, args.seed, scan=not args.no_scan)
            for label, r in res.items():
                rows.append((label, versions[name], case, X.shape, k, batch, steps, r))

    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{args.epochs} timed epochs after 1 warm-up, seed {args.seed}, one thread"
    )
    print()
    print(
        "| backend | version | case (n x d, k, batch) | steps/epoch | compile s (CPU s) "
        "| s/epoch | CPU s/epoch | CPU/wall | final loss |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for label, ver, case, (n, d), k, batch, steps, r in rows:
        comp = "" if r["compile"] is None else "{:.2f} ({:.2f})".format(*r["compile"])
        print(
            f"| {label} | {ver} | {case} ({n} x {d}, {k}, {batch}) | {steps} | {comp} "
            f"| {r['wall']:.3f} | {r['cpu']:.3f} | {r['ratio']:.2f} | {r['loss']:.4f} |"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print()
    print(f"peak RSS {rss:.0f} MB")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
