"""Connected components of the sample kNN graphs the graph-based methods build (not a test).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/graph_components.py [--datasets a,b] [--out FILE] [--mirror DIR]

Eigen-solvers on a disconnected graph need care (a zero eigenvalue per component), so this
lists, for every data set of ``config/experiments/benchmark.yaml`` and of the paper
configs (dgufs, fsbc, golfs, kmeans_ufs, spcafs), the number of connected components of
each distinct sample graph, built on the data the workflow gives the method:

* methods with a :meth:`graph_spec`: the workflow's graph step itself,
  :func:`ufs.pipeline.steps.graph_of` on the data set materialised and standardised by
  :func:`ufs.pipeline.data_steps.download` / ``standardize`` (the mirror only: sets that
  need the network are listed as not measured), with ``input_space`` of the estimator
  built by :func:`ufs.registry.make_estimator` from the registry's label-free defaults;
* methods that search neighbours inside ``fit`` (FSASL, SOGFS, UDFS, RNE): that graph,
  rebuilt with the method's own functions on its fit input (constant features dropped,
  as :meth:`ufs.base.UFSSelector.fit` does). For FSASL and SOGFS this is the graph of the
  first iteration only; later iterations learn it (see the method table).

A graph's components are those of its non-zero off-diagonal pattern (weights that
underflow to 0 are no edges), ``scipy.sparse.csgraph.connected_components(directed=
False)``. Cell: the number of components, with the size of the largest in parentheses
when there is more than one. Simulated sets use the config seed (replicate 0).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import yaml
from scipy.sparse.csgraph import connected_components

from ufs.base import check_input
from ufs.datasets import datasets_needing_network
from ufs.graph import knn_graph, knn_indices
from ufs.methods._optimal_graph import adaptive_neighbor_graph
from ufs.methods.fsasl import mean_pairwise_distance
from ufs.methods.rne import lle_weights
from ufs.methods.udfs import udfs_local_matrix
from ufs.pipeline.data_steps import download, load_data, standardize
from ufs.pipeline.steps import graph_of
from ufs.preprocessing import check_input_space, input_matrix
from ufs.registry import available_methods, get_method, make_estimator
from ufs.validation import constant_feature_mask

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("benchmark", "dgufs", "fsbc", "golfs", "kmeans_ufs", "spcafs")

Builder = Callable[[dict[str, Any]], sp.spmatrix]
#: what a method does with its workflow graph beyond using it as given
NOTES = {
    "sf2sog": "rows normalised to sum 1; G is learned on this support",
    "urafs": "only its pattern: S is learned on this support",
    "golfs": "local L0; the global L1 (dense self-representation) is separate",
    "lrpfs_ma2024": "only the degrees are used (attribute scores)",
}


@dataclass(frozen=True)
class GraphUse:
    """One method's graph: its definition (column label), how to build it, and a note."""

    method: str
    label: str
    build: Builder
    source: str
    note: str = ""
    #: the binary graph on the same neighbours (heat graphs): tells underflow from topology
    pattern: Builder | None = None


def spec_label(gspec: dict[str, Any]) -> str:
    """``k=5 heat standardized``-style name of a workflow graph spec (defaults filled in)."""
    s = {"sigma": None, "algorithm": "auto", "input_space": "standardized", **gspec}
    sigma = "" if s["sigma"] is None else f" σ={s['sigma']:g}"
    alg = "" if s["algorithm"] == "auto" else f" {s['algorithm']}"
    return f"k={s['n_neighbors']} {s['weight']}{sigma}{alg} {s['input_space']}"


def fit_input(d: dict[str, Any], space: str) -> np.ndarray:
    """The matrix ``_fit`` sees: the input space's matrix without constant features."""
    X = check_input(input_matrix(space, d["X_raw"], d["X"]))
    constant = constant_feature_mask(X)
    return X[:, ~constant] if constant.any() else X


def fsasl_graph(est: Any, space: str) -> Builder:
    """FSASL ``_fit``, iteration 1: heat kNN graph, σ = mean pairwise distance."""

    def build(d: dict[str, Any]) -> sp.spmatrix:
        X, k = fit_input(d, space), int(est.n_neighbors)
        neighbors = None
        if est.local_reg is None:
            idx, dist = knn_indices(X, k + 1)
            neighbors = (idx[:, :k], dist[:, :k])
        return knn_graph(X, k, weight="heat", sigma=mean_pairwise_distance(X), neighbors=neighbors)

    return build


def sogfs_graph(est: Any, space: str) -> Builder:
    """SOGFS ``_fit``: the initial adaptive-neighbour graph on centred, unit-norm columns."""

    def build(d: dict[str, Any]) -> sp.spmatrix:
        X, k = fit_input(d, space), int(est.n_neighbors)
        Xc = X - X.mean(axis=0)
        Xc = Xc / np.sqrt(np.einsum("ij,ij->j", Xc, Xc) + np.finfo(float).eps)
        idx, dist = knn_indices(Xc, k + 1)
        return adaptive_neighbor_graph(idx, dist**2)[0]

    return build


def method_graphs() -> tuple[list[GraphUse], list[str]]:
    """Every registered method's graph (label-free defaults) and the methods without one."""
    uses, none = [], []
    for name in available_methods():
        est = make_estimator(name, get_method(name).defaults, n_clusters=2)
        space = check_input_space(est.input_space)
        gspec = est.graph_spec()
        k = getattr(est, "n_neighbors", None)
        if gspec is not None:  # as ufs.pipeline.config.build_plan: the graph of the fit input
            spec = {**gspec, "input_space": space}
            binary = {**spec, "weight": "binary", "sigma": None}
            uses.append(
                GraphUse(
                    name,
                    spec_label(spec),
                    lambda d, s=spec: graph_of(d, s),
                    "graph_spec",
                    NOTES.get(name, ""),
                    None if spec["weight"] == "binary" else lambda d, s=binary: graph_of(d, s),
                )
            )
        elif name == "fsasl":
            uses.append(
                GraphUse(
                    name,
                    f"k={k} heat σ=mean distance {space}",
                    fsasl_graph(est, space),
                    "fit",
                    "iteration 1 only; then A is re-learned on the kNN of XW, and L adds "
                    "λ1 (I−S)(I−S)ᵀ of the lasso codes",
                    lambda d, e=est, s=space: knn_graph(fit_input(d, s), int(e.n_neighbors)),
                )
            )
        elif name == "sogfs":
            uses.append(
                GraphUse(
                    name,
                    f"k={k} adaptive-neighbour {space} centred unit-norm",
                    sogfs_graph(est, space),
                    "fit",
                    "initial S only; S-steps then learn S on the kNN of XW (target: c components)",
                )
            )
        elif name == "udfs":
            uses.append(
                GraphUse(
                    name,
                    f"k={k} local cliques {space}",
                    lambda d, e=est, s=space: udfs_local_matrix(
                        fit_input(d, s), int(e.n_neighbors), float(e.lam)
                    ),
                    "fit",
                    "L = Σ S_i B_i S_iᵀ (n × n); eigen-problem on XᵀLX (p × p), not on L",
                )
            )
        elif name == "rne":
            uses.append(
                GraphUse(
                    name,
                    f"k={k} LLE weights {space}",
                    lambda d, e=est, s=space: lle_weights(
                        fit_input(d, s), int(e.n_neighbors), reg=e.reg
                    )[0],
                    "fit",
                    "reconstruction weights W; no graph eigen-solver",
                )
            )
        else:
            none.append(name)
    return uses, none


def components(G: sp.spmatrix) -> tuple[int, int]:
    """Number of connected components and the size of the largest."""
    C = sp.coo_matrix(G)
    keep = (C.data != 0) & (C.row != C.col)
    A = sp.csr_matrix((np.ones(int(keep.sum())), (C.row[keep], C.col[keep])), shape=C.shape)
    n_comp, labels = connected_components(A, directed=False)
    return int(n_comp), int(np.bincount(labels).max())


def config_datasets(mirror: str | None) -> tuple[dict[str, list[str]], dict[str, int], str]:
    """``{data set: [configs naming it]}`` (benchmark order first), seeds and the mirror."""
    names: dict[str, list[str]] = {}
    seeds: dict[str, int] = {}
    for cfg in CONFIGS:
        config = yaml.safe_load((REPO / "config" / "experiments" / f"{cfg}.yaml").read_text())
        if mirror is None and config.get("mirror_dir"):
            mirror = str((REPO / config["mirror_dir"]).resolve())
        for name in config.get("datasets") or {}:
            names.setdefault(name, []).append(cfg)
            seeds.setdefault(name, int(config.get("seed", 0)))
    return names, seeds, mirror or ""


def load(name: str, seed: int, mirror: str, tmp: Path) -> dict[str, Any]:
    """The workflow's data steps: materialise, validate and z-score, then read back."""
    raw, data = tmp / f"{name}.raw.npz", tmp / f"{name}.npz"
    download(name, name, seed, raw, mirror=mirror, cache=tmp / "cache")
    standardize(raw, data, tmp / f"{name}.json", source=f"dataset {name!r}")
    return load_data(data)


def cell(value: tuple[int, int]) -> str:
    n_comp, largest = value
    return str(n_comp) if n_comp == 1 else f"**{n_comp}** ({largest})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", help="comma-separated data sets (default: all of the configs)")
    ap.add_argument("--out", type=Path, help="also write the markdown to this file")
    ap.add_argument("--mirror", help="dataset mirror (default: the configs' mirror_dir)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()

    names, seeds, mirror = config_datasets(args.mirror)
    if args.datasets:
        wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            ap.error(f"not in the configs: {unknown}; known: {sorted(names)}")
        names = {n: names[n] for n in wanted}
    offline = set(datasets_needing_network(mirror or None))
    uses, no_graph = method_graphs()
    uses.sort(key=lambda u: (u.source != "graph_spec", u.label, u.method))
    labels = list(dict.fromkeys(u.label for u in uses))
    graphs = {u.label: u for u in uses}  # same label = same graph

    rows, skipped, errors = [], [], []
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, cfgs in names.items():
            if name in offline:
                skipped.append(
                    f"`{name}` ({', '.join(cfgs)}): not in the mirror (needs the network)"
                )
                continue
            t = time.perf_counter()
            try:
                d = load(name, seeds[name], mirror, Path(tmpdir))
            except Exception as exc:  # reported, not fatal
                skipped.append(f"`{name}` ({', '.join(cfgs)}): {type(exc).__name__}: {exc}")
                continue
            n = d["X"].shape[0]
            row: dict[str, str] = {}
            for label in labels:
                g = graphs[label]
                try:
                    found = components(g.build(d))
                    row[label] = cell(found)
                    if found[0] > 1 and g.pattern is not None:
                        pattern = components(g.pattern(d))
                        if pattern != found:
                            row[label] += f" ‡{cell(pattern)}"
                except Exception as exc:  # reported, not fatal
                    row[label] = "error"
                    errors.append(f"`{name}`, {label}: {type(exc).__name__}: {exc}")
            rows.append((name, n, row))
            print(f"{name}: n={n}, {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0

    out = [
        "# Connected components of the sample kNN graphs",
        "",
        f"`python benchmarks/graph_components.py` (mirror `{mirror}`, one thread): "
        f"{len(rows)} data sets in {seconds:.0f} s. Cell: number of connected components "
        "(undirected, non-zero off-diagonal entries); with more than one, the size of the "
        "largest component in parentheses. ‡m: the same neighbours with binary weights give m "
        "components, so the extra ones are heat-kernel weights that underflow to 0 "
        "(`knn_graph` drops zero weights).",
        "",
        "| data set | n | " + " | ".join(labels) + " |",
        "|---|---:|" + "---:|" * len(labels),
    ]
    out += [
        f"| {name} | {n} | " + " | ".join(row[lb] for lb in labels) + " |" for name, n, row in rows
    ]
    out += ["", "## Graph of each method (label-free defaults)", ""]
    out += ["| method | graph | built by | note |", "|---|---|---|---|"]
    out += [
        f"| {u.method} | {u.label} | "
        + ("workflow graph step (`graph_spec`)" if u.source == "graph_spec" else "`_fit`")
        + f" | {u.note} |"
        for u in sorted(uses, key=lambda u: u.method)
    ]
    out += ["", "No kNN graph: " + ", ".join(no_graph) + "."]
    if skipped:
        out += ["", "## Not measured", ""] + [f"- {s}" for s in skipped]
    if errors:
        out += ["", "## Errors", ""] + [f"- {e}" for e in errors]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
