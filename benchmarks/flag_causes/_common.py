"""What the flag-cause scripts share: the data, the h grid, the ACC, the archive.

Each script in this folder is run as ``python benchmarks/flag_causes/<method>.py``, so
this module is importable as ``_common`` (the script's folder is ``sys.path[0]``).

* :func:`load_zscored`: a registered data set (:func:`ufs.datasets.load_dataset`) and
  its z-scored matrix (:func:`ufs.preprocessing.standardize`), the benchmark's input;
* :func:`h_grid`: the benchmark's relative h grid (:func:`ufs.pipeline.config.relative_h`,
  ``round(p × {1, 2, 5, 10, 20} %)`` clipped to ``[5, 300]``), :func:`h_grid_nonconstant`
  the same over the non-constant columns;
* :func:`kmeans_acc` / :func:`mean_acc` / :func:`overlap_acc`: the mean k-means ACC of a
  selection as the benchmark's evaluate step (:func:`ufs.evaluation.evaluate_clustering`,
  20 restarts, seeds 0..19), averaged over h, or beside the overlap of two selections;
  :func:`cap_long`, :func:`overlap_acc_rows` / :func:`print_overlap_table`: the per-h
  comparison of a capped and a longer fit, as cells or as the markdown table;
* :func:`archived_selection` / :func:`archive_mismatches`: the archived label-free
  selection of a method and where a fit differs from it; :func:`archive_cell` (the table
  cell), :func:`note_archive` (a line on stderr) and :func:`require_archive` (stop on a
  difference) act on the result;
* :func:`gamma_sweep` / :func:`sweep_cell`: the γ sweep columns of the degeneracy scripts,
  :func:`iterations_cell`: iterations with ``✓`` (stopping rule met) or ``†`` (cap);
  :func:`add_long_fit_options`: ``--factor``, ``--seed``, ``--restarts``;
* :func:`parser`: ``--datasets``, ``--mirror``, ``--archive``. The mirror defaults to
  ``<repo>/../shared/datasets`` (``None``, the loader's own default, if that folder is
  absent); the archive to the benchmark's ``benchmarks/results/benchmark.tar.xz``,
  extracted once per process into a temporary folder
  (:func:`ufs.report.archive_tables.report_inputs_from_archive`); ``--archive DIR`` takes an
  evaluations folder as it is, ``--archive ''`` skips the check.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import json
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ufs.datasets import load_dataset
from ufs.evaluation import evaluate_clustering
from ufs.pipeline.config import relative_h
from ufs.preprocessing import standardize
from ufs.report.archive_tables import report_inputs_from_archive

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DEFAULT_MIRROR = str(SHARED / "datasets") if (SHARED / "datasets").is_dir() else None
DEFAULT_ARCHIVE = str(REPO / "benchmarks" / "results" / "benchmark.tar.xz")
H_SPEC = {"percent": [1, 2, 5, 10, 20], "min": 5, "max": 300}
N_RESTARTS = 20


class Data(NamedTuple):
    """A data set as the benchmark fits it: ``X`` z-scored, ``y`` labels ``0..c−1``, ``c``
    classes, ``raw`` the loaded matrix (for the scripts that build another input)."""

    X: np.ndarray
    y: np.ndarray
    c: int
    raw: np.ndarray


def load_zscored(name: str, mirror: str | Path | None = DEFAULT_MIRROR) -> Data:
    """The data set ``name`` (:func:`ufs.datasets.load_dataset`), z-scored."""
    d = load_dataset(name, mirror=mirror)
    return Data(standardize(d.X).X, d.y, int(d.y.max()) + 1, d.X)


def dataset_names(arg: str) -> list[str]:
    """The names of a comma-separated ``--datasets`` value (blanks dropped)."""
    return [s.strip() for s in arg.split(",") if s.strip()]


def h_grid(p: int) -> list[int]:
    """The benchmark's h values for ``p`` features."""
    return relative_h(H_SPEC, p)


def h_grid_nonconstant(X: np.ndarray) -> list[int]:
    """The benchmark's h values for the non-constant columns of ``X``."""
    return h_grid(int(np.sum(np.any(X != 0, axis=0))))


def kmeans_acc(
    X: np.ndarray, y: np.ndarray, sel: Sequence[int], n_restarts: int = N_RESTARTS
) -> float:
    """Mean k-means ACC of the columns ``sel`` of ``X`` (restart ``r``: seed ``r``)."""
    return evaluate_clustering(X[:, sel], y, n_restarts=n_restarts, seed_offset=0).mean("acc")


def mean_acc(X: np.ndarray, y: np.ndarray, order: np.ndarray, hs: Sequence[int]) -> float:
    """:func:`kmeans_acc` of the top ``h`` of ``order``, averaged over ``hs``."""
    return float(np.mean([kmeans_acc(X, y, order[:h]) for h in hs]))


def overlap_acc(
    X: np.ndarray,
    y: np.ndarray,
    s_a: Sequence[int],
    s_b: Sequence[int],
    h: int,
    n_restarts: int = N_RESTARTS,
) -> tuple[float, float, float]:
    """``|S_a ∩ S_b| / h`` and the :func:`kmeans_acc` of ``S_a`` and of ``S_b``."""
    overlap = len(np.intersect1d(s_a, s_b)) / h
    return overlap, kmeans_acc(X, y, s_a, n_restarts), kmeans_acc(X, y, s_b, n_restarts)


def cap_long(
    X: np.ndarray,
    y: np.ndarray,
    order_cap: np.ndarray,
    order_long: np.ndarray,
    h: int,
    n_restarts: int = N_RESTARTS,
) -> dict[str, float]:
    """The cells ``h``, ``overlap``, ``acc_cap``, ``acc_long`` of the top ``h`` of two
    rankings (:func:`overlap_acc`)."""
    overlap, acc_cap, acc_long = overlap_acc(X, y, order_cap[:h], order_long[:h], h, n_restarts)
    return {"h": h, "overlap": overlap, "acc_cap": acc_cap, "acc_long": acc_long}


def overlap_acc_rows(
    ds: str,
    X: np.ndarray,
    y: np.ndarray,
    order_cap: np.ndarray,
    order_long: np.ndarray,
    hs: Sequence[int],
    rank_cap: int | None = None,
    rank_long: int | None = None,
) -> list[str]:
    """Markdown rows ``| ds | h | overlap | ACC cap | ACC long | ΔACC |`` of the top ``h``
    of two rankings (:func:`overlap_acc`); with the fits' resolved ranks, ``◊`` marks an
    ACC whose ``h`` is above its fit's rank (the benchmark's *degenerate* rule)."""
    rows = []
    for h in hs:
        ov, a_cap, a_lng = overlap_acc(X, y, order_cap[:h], order_long[:h], h)
        m_cap = " ◊" if rank_cap is not None and h > rank_cap else ""
        m_lng = " ◊" if rank_long is not None and h > rank_long else ""
        rows.append(
            f"| {ds} | {h} | {ov:.2f} | {a_cap:.3f}{m_cap} | {a_lng:.3f}{m_lng} | "
            f"{a_lng - a_cap:+.3f} |"
        )
    return rows


def print_overlap_table(rows: list[str], cap: int, k: int) -> None:
    """Print the :func:`overlap_acc_rows` under their header (``ACC {cap}``, ``ACC {k}``)."""
    print(f"\n| data set | h | overlap | ACC {cap} | ACC {k} | ΔACC |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


def archive_cell(
    archive: str | Path | None, ds: str, method: str, order: np.ndarray, hs: Sequence[int]
) -> str:
    """``True`` / ``False``: whether the top ``h`` of ``order`` is the archived label-free
    selection (as lists) at every ``h`` of ``hs`` the archive has; ``n/a`` without one."""
    bad = archive_mismatches(archive, ds, method, {h: order[:h] for h in hs})
    return "n/a" if bad is None else str(not bad)


def add_long_fit_options(ap: argparse.ArgumentParser) -> None:
    """``--factor``, ``--seed``, ``--restarts`` of the scripts that continue one fit past
    the default cap."""
    ap.add_argument("--factor", type=int, default=10, help="long cap = factor × max_iter")
    ap.add_argument("--seed", type=int, default=0, help="random_state of the fit")
    ap.add_argument("--restarts", type=int, default=N_RESTARTS, help="k-means restarts")


def iterations_cell(n_iter: int, converged: bool) -> str:
    """``"n ✓"`` (the stopping rule met) or ``"n †"`` (the cap ran out)."""
    return f"{n_iter} {'✓' if converged else '†'}"


def gamma_sweep(gammas: str) -> tuple[list[float], str]:
    """The γ values of a ``--gammas`` value and the header cells of their columns."""
    values = [float(g) for g in gammas.split(",")]
    return values, " | ".join(f"γ={g:g}: rr / ACC" for g in values)


def sweep_cell(est, X: np.ndarray, y: np.ndarray, hs: Sequence[int]) -> str:
    """``resolved rank / mean ACC over hs`` of a fitted ranking estimator."""
    return f"{est.resolved_rank_} / {mean_acc(X, y, est.feature_order_, hs):.3f}"


@functools.cache
def _extracted(archive: Path) -> Path:
    folder = tempfile.mkdtemp(prefix="flag_causes_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    report_inputs_from_archive(archive, folder)
    return Path(folder) / "evaluations"


@functools.cache
def evaluations_dir(archive: str | Path | None) -> Path | None:
    """The evaluations folder of an ``--archive`` value: an archive file is extracted
    (once per process), a folder is taken as it is; ``''``/``None``: no check."""
    if not archive:
        return None
    path = Path(archive)
    if path.is_dir():
        return path
    if path.is_file():
        return _extracted(path.resolve())
    print(f"[archive {archive} not found: no check against it]", file=sys.stderr)
    return None


def archived_selection(
    evaluations: Path | None, ds: str, method: str
) -> dict[int, list[int]] | None:
    """``{h: selected}`` of the first archived label-free evaluation of ``method`` on
    ``ds`` in the folder ``evaluations``, or ``None``."""
    if evaluations is None:
        return None
    for f in sorted((evaluations / ds).glob(f"{method}.c*.json")):
        for e in json.loads(f.read_text())["evaluations"]:
            if e["label_free"]:
                return {r["h"]: r["selected"] for r in e["results"]}
    return None


def archive_mismatches(
    archive: str | Path | None,
    ds: str,
    method: str,
    selections: Mapping[int, Sequence[int]],
    *,
    ordered: bool = True,
) -> list[int] | None:
    """The ``h`` at which ``selections`` (``{h: selected}``) differ from the archived
    label-free selection of ``method`` on ``ds`` (as lists if ``ordered``, else as sets),
    over the ``h`` both have; ``None`` where there is nothing to compare with."""
    ref = archived_selection(evaluations_dir(archive), ds, method)
    if ref is None:
        return None
    norm = list if ordered else sorted
    return [h for h, s in selections.items() if h in ref and norm(s) != norm(ref[h])]


def note_archive(
    archive: str | Path | None,
    ds: str,
    method: str,
    selections: Mapping[int, Sequence[int]],
    what: str,
) -> None:
    """One line on stderr: whether the fit ``what`` reproduced the archived selection
    (:func:`archive_mismatches`, as lists); nothing without an archived selection."""
    bad = archive_mismatches(archive, ds, method, selections)
    if bad is not None:
        verdict = f"differs at h = {bad}" if bad else "reproduced"
        print(f"[{ds}: archived label-free selection {verdict} ({what})]", file=sys.stderr)


def require_archive(
    archive: str | Path | None, ds: str, method: str, selections: Mapping[int, Sequence[int]]
) -> bool:
    """Stop if ``selections`` differ (as sets) from the archived selection at some h;
    ``True`` if they were checked, ``False`` without an archived selection."""
    bad = archive_mismatches(archive, ds, method, selections, ordered=False)
    if bad:
        raise SystemExit(f"{ds} h={bad[0]}: the cap selection differs from the archived one")
    return bad is not None


def parser(
    doc: str, datasets: str, datasets_help: str = "comma-separated data set names"
) -> argparse.ArgumentParser:
    """An argument parser with ``--datasets`` (default ``datasets``), ``--mirror`` and
    ``--archive``; its description is the first line of ``doc``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--datasets", default=datasets, help=datasets_help)
    ap.add_argument(
        "--mirror", default=DEFAULT_MIRROR, help="offline data mirror (default: %(default)s)"
    )
    ap.add_argument(
        "--archive",
        default=DEFAULT_ARCHIVE,
        help="benchmark archive (.tar.xz) or its evaluations folder to check the fits "
        "against ('' to skip; default: %(default)s)",
    )
    return ap
