"""``ufs benchmark-report``: ``docs/benchmark.md`` from a benchmark run's results.

Reads what the workflow wrote under the results directory (``tables/<dataset>.csv``,
``evaluations/<instance>/<chunk>.json``, ``benchmarks/<step>/**.tsv``, ``data/<instance>.json``)
and the experiment config, and writes one markdown report: scope, the parameter
protocols, average ranks across data sets with the Friedman test and CD diagrams
(:mod:`ufs.stats.ranking`, drawn by :mod:`ufs.report.rank_report`), the best method per data set, the label-free scores, the gap
between label-tuned and label-free parameters, run time and failures.

Works on partial results: only the data sets with a ``tables/<dataset>.csv`` are
reported, and the report says which of the config's data sets are missing. Nothing is
hard-coded: every number comes from the files.

Size (~1300 lines): ``docs/benchmark.md`` section by section, one function per section
in the document's order (scope, protocol, ranks, pairs, best per data set, scores, label
gap, run time, missing data sets, failures, scaling, simulations); the statistics come
from :mod:`ufs.stats`, so what is left is one document's text, kept in one file to read
in its order.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..datasets.families import config_families
from ..fileio import read_json, write_text
from ..pipeline.config import REPLICATE_SEP
from ..pipeline.status import STATUS_MARK
from ..stats import ranking, references, tuning, views
from . import absolute_h as absolute_grid
from . import answer, flag_causes, rank_report, robustness, sensitivity
from .aggregate import FLAGGED, degenerate_fits, fit_records, warm_cpu
from .answer import TITLES, pairwise_results, support_lines
from .leaderboard import leaderboard_lines, mostly_flagged_leaders
from .protocol_compute import protocol_compute_rows, read_setting_compute

__all__ = [
    "NoResultsError",
    "Run",
    "load_run",
    "benchmark_report",
    "scope_line",
    "SCOPE_PREFIX",
]

SCOPE_PREFIX = "**Scope:** "
REFERENCE = "all_features"  # the all-features reference: shown beside, never "best"
BUDGET = "budget_exceeded"
FAILURES = FLAGGED  # not converged, diverged, budget exceeded, degenerate (ufs.report.aggregate)
_BUDGET_RE = re.compile(r"over ([0-9.eE+]+) CPU-s")


class NoResultsError(FileNotFoundError):
    """The results directory holds no per-data-set table."""


@dataclass
class Run:
    """What a benchmark results directory holds (the data sets with a table)."""

    results_dir: Path
    config: dict[str, Any]
    tables: pd.DataFrame  # the concatenated tables/<dataset>.csv
    datasets: list[str]  # with a table: config order, then others sorted
    missing: list[str]  # in the config, without a table
    fits: pd.DataFrame  # one row per fit (see :func:`read_fits`)
    compute: pd.DataFrame  # per workflow step: jobs, cpu_time, s (benchmark TSVs)
    shapes: dict[str, tuple[Any, Any, Any]]  # dataset -> (n, p, classes)
    #: one row per evaluated setting: its fit and k-means CPU and protocols
    #: (:func:`ufs.report.protocol_compute.read_setting_compute`)
    settings_compute: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def protocols(self) -> list[str]:
        present = set(self.tables["protocol"])
        return [p for p in ranking.PROTOCOLS if p in present]

    @property
    def methods(self) -> list[str]:
        return sorted(self.tables["method"].unique())


# -- reading ---------------------------------------------------------------------------


def load_config(path: str | Path) -> dict[str, Any]:
    """The experiment config (YAML) as a dict."""
    import yaml

    return yaml.safe_load(Path(path).read_text()) or {}


def read_tables(results_dir: Path) -> pd.DataFrame:
    """All ``tables/<dataset>.csv`` concatenated; :class:`NoResultsError` if none."""
    csvs = sorted((results_dir / "tables").glob("*.csv"))
    if not csvs:
        raise NoResultsError(f"no per-data-set tables under {results_dir / 'tables'}")
    return pd.concat([pd.read_csv(f) for f in csvs], ignore_index=True)


def _instance_base(instance: str, datasets: set[str]) -> str | None:
    if instance in datasets:
        return instance
    base = instance.rsplit(REPLICATE_SEP, 1)[0]
    return base if base in datasets else None


def evaluation_files(results_dir: Path, datasets: list[str]) -> list[Path]:
    """The evaluation files of the given data sets (and of their replicates)."""
    wanted = set(datasets)
    return [
        path
        for folder in sorted((results_dir / "evaluations").glob("*"))
        if _instance_base(folder.name, wanted) is not None
        for path in sorted(folder.glob("*.json"))
    ]


def read_fits(results_dir: Path, datasets: list[str]) -> pd.DataFrame:
    """One row per fit of the given data sets (:func:`ufs.report.aggregate.fit_records`,
    a ranking fit serves every h; replicates are separate fits): ``dataset`` (the config's
    name), ``instance``, ``method``, ``pid``, ``fit``, ``label_free``, ``in_grid``,
    ``status``, ``fit_seconds``, ``budget_reason``, ``budget_seconds`` (recorded, if any),
    ``restarts``, ``git_commit`` and ``degenerate`` (the fit's own flag)."""
    fits = fit_records(evaluation_files(results_dir, datasets)).rename(
        columns={"dataset": "instance", "base": "dataset"}
    )
    cols = ["dataset", "instance", "method", "pid", "fit", "label_free", "in_grid", "status"]
    cols += ["fit_seconds", "budget_reason", "budget_seconds", "restarts", "git_commit"]
    return fits[cols + ["degenerate"]]


def _column_sum(t: pd.DataFrame, col: str) -> float:
    return float(pd.to_numeric(t[col], errors="coerce").sum()) if col in t else 0.0


def read_compute(results_dir: Path) -> pd.DataFrame:
    """Per workflow step (``benchmarks/<step>/...tsv``): jobs, summed ``cpu_time`` and
    ``s`` (seconds); a value Snakemake could not measure (``NA``) counts as 0. A job run
    in a warm worker adds the worker's CPU (:func:`ufs.report.aggregate.warm_cpu`) to the
    benchmark's."""
    rows = []
    root = results_dir / "benchmarks"
    for tsv in sorted(root.rglob("*.tsv")):
        t = pd.read_csv(tsv, sep="\t")
        rows.append(
            {
                "step": tsv.relative_to(root).parts[0] if tsv.parent != root else "other",
                "jobs": 1,
                "cpu_time": _column_sum(t, "cpu_time") + warm_cpu(tsv),
                "s": _column_sum(t, "s"),
            }
        )
    if not rows:
        return pd.DataFrame(columns=["jobs", "cpu_time", "s"], index=pd.Index([], name="step"))
    return pd.DataFrame(rows).groupby("step")[["jobs", "cpu_time", "s"]].sum()


def dataset_shape(results_dir: Path, dataset: str, tables: pd.DataFrame) -> tuple:
    """(n, p, classes) from ``data/<dataset>.json`` (or its first replicate), else the
    data set registry, else p from the all-features row; unknown values are ``None``."""
    for path in [results_dir / "data" / f"{dataset}.json"] + sorted(
        (results_dir / "data").glob(f"{dataset}-r*.json")
    ):
        if path.exists():
            d = read_json(path)
            return d.get("n_samples"), d.get("n_features"), d.get("n_classes")
    try:
        from ..datasets import get_dataset

        spec = get_dataset(dataset)
        return spec.n_samples, spec.n_features, spec.n_classes
    except Exception:  # not a registered data set (a user file, say)
        full = tables[(tables["dataset"] == dataset) & (tables["h_label"].astype(str) == "all")]
        return None, (int(full["h"].iloc[0]) if len(full) else None), None


def configured_datasets(config: dict[str, Any]) -> list[str]:
    """The data sets a config runs: its ``only_datasets`` slice, else every entry."""
    return list(config.get("only_datasets") or (config.get("datasets") or {}).keys())


def oracle_metric(config: dict[str, Any]) -> str:
    """The metric the config's label-tuned (and label-free tuned) choice maximises."""
    return (config.get("evaluation") or {}).get("oracle_metric", "acc")


def load_run(results_dir: str | Path, config_path: str | Path) -> Run:
    """Read everything the report needs from ``results_dir`` and the config: the tables
    with the label-free tuned protocol's rows made from their grid rows
    (:func:`ufs.stats.tuning.with_label_free_tuned`, the config's families merged)."""
    results_dir = Path(results_dir)
    config = load_config(config_path)
    with views.extra_families(config_families(config)):
        tables = tuning.with_label_free_tuned(read_tables(results_dir), oracle_metric(config))
    configured = configured_datasets(config)
    present = set(tables["dataset"].astype(str))
    datasets = [d for d in configured if d in present] + sorted(present - set(configured))
    return Run(
        results_dir=results_dir,
        config=config,
        tables=tables,
        datasets=datasets,
        missing=[d for d in configured if d not in present],
        fits=read_fits(results_dir, datasets),
        compute=read_compute(results_dir),
        shapes={d: dataset_shape(results_dir, d, tables) for d in datasets},
        settings_compute=read_setting_compute(evaluation_files(results_dir, datasets)),
    )


# -- formatting helpers ----------------------------------------------------------------


def _code(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _pct(x: float) -> str:
    return "–" if pd.isna(x) else f"{100 * x:.1f}"


def _pp(x: float) -> str:
    return "–" if pd.isna(x) else f"{100 * x:+.1f}"


def _secs(x: float) -> str:
    if pd.isna(x):
        return "–"
    return f"{x:.2f}" if x < 10 else (f"{x:.1f}" if x < 1000 else f"{x:.0f}")


def _mark(status: Any) -> str:
    return STATUS_MARK.get(status, "") if isinstance(status, str) else ""


def _num(x: float) -> str:
    return f"{x:g}" if float(x) != int(x) else str(int(x))


def _shape(run: Run, d: str) -> str:
    n, p, k = ("?" if v is None else str(v) for v in run.shapes.get(d, (None, None, None)))
    return f"{n} × {p}, {k}"


def _table(header: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> list[str]:
    """A markdown table; columns in ``right`` right-aligned."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + [""]


# -- scope -----------------------------------------------------------------------------


def h_rule(config: dict[str, Any]) -> str:
    """The h grid of the config's data sets (its ``only_datasets`` slice, if any), in words
    (one rule, or one per group)."""
    groups: dict[str, list[str]] = {}
    entries = config.get("datasets") or {}
    for name in configured_datasets(config):
        groups.setdefault(_h_spec_text((entries.get(name) or {}).get("h")), []).append(name)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{rule} ({', '.join(names)})" for rule, names in groups.items())


def _h_spec_text(spec: Any) -> str:
    if isinstance(spec, dict):
        pct = ", ".join(_num(v) for v in spec.get("percent", []))
        lo, hi = spec.get("min", 1), spec.get("max")
        clip = f"[{lo}, {hi}]" if hi is not None else f"≥ {lo}"
        relax = f" (below {lo} where that leaves fewer than 3 values)" if lo > 1 else ""
        return f"h = round(p × {{{pct}}} %) clipped to {clip}{relax} and below p"
    if spec:
        return "h ∈ {" + ", ".join(str(v) for v in spec) + "}"
    return "h not set"


def _schema_budget() -> float | None:
    """The schema's default ``jobs.fit_budget_seconds`` (when the config leaves it out)."""
    schema = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
    try:
        s = load_config(schema)
        return s["properties"]["jobs"]["properties"]["fit_budget_seconds"]["default"]
    except Exception:
        return None


def budget_text(run: Run) -> str:
    """The per-fit budget: the one recorded in the results if any, else the config's."""
    recorded = set()
    if len(run.fits):
        recorded = {float(v) for v in run.fits["budget_seconds"].dropna()}
        for reason in run.fits["budget_reason"].dropna():
            m = _BUDGET_RE.search(str(reason))
            if m:
                recorded.add(float(m.group(1)))
    if len(recorded) == 1:
        return f"per-fit budget {_num(recorded.pop())} CPU-s (recorded in the results)"
    if recorded:  # a budget raised during the run: the earlier fits that stand
        top = max(recorded)
        budgets = pd.to_numeric(run.fits["budget_seconds"], errors="coerce")
        earlier = run.fits[budgets < top]
        stopped = int((earlier["status"] == "budget_exceeded").sum())
        lows = " / ".join(f"{_num(v)}" for v in sorted(recorded - {top}))
        text = (
            f"per-fit budget {_num(top)} CPU-s (recorded in the results); {len(earlier)} fits "
            f"were kept from a run under {lows} CPU-s"
        )
        if stopped:
            return text + f", {stopped} of them stopped there (§ at the lower budget)"
        return text + ", each finished within it, so the larger budget gives the same result"
    value = (run.config.get("jobs") or {}).get("fit_budget_seconds")
    source = "from the config"
    if value is None:
        value, source = _schema_budget(), "the schema default"
    if value is None:
        return "per-fit budget: none recorded or configured"
    return f"per-fit budget {_num(value)} CPU-s ({source}; none recorded in the results)"


def restarts_text(run: Run) -> str:
    configured = (run.config.get("evaluation") or {}).get("restarts", 20)
    recorded = sorted({int(r) for r in run.fits["restarts"].dropna()}) if len(run.fits) else []
    if not recorded:
        return f"{configured} k-means restarts (config)"
    text = "/".join(str(r) for r in recorded) + " k-means restarts"
    return text if recorded == [configured] else text + f" (config: {configured})"


def git_commit() -> str | None:
    """``git rev-parse --short HEAD`` of the repository holding this package, if any."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _protocols_text(run: Run) -> str:
    n = run.tables.groupby("protocol")["dataset"].nunique()
    lf = "label-free (primary)"
    if "oracle" not in n:
        return f"protocols {lf}; label-tuned not run"
    tuned = "label-tuned (secondary)"
    if n["oracle"] < len(run.datasets):
        tuned += f" on {n['oracle']} of the {len(run.datasets)} data sets"
    if tuning.PROTOCOL in n:
        tuned = (
            f"label-free tuned (the other families' labels choose, from the same grid runs, "
            f"on {n[tuning.PROTOCOL]} data sets) and {tuned}"
        )
    if "label_free" not in n:
        return f"protocols {tuned}; label-free not run"
    return f"protocols {lf}{', ' if tuning.PROTOCOL in n else ' and '}{tuned}"


def _compute_text(compute: pd.DataFrame) -> str:
    if compute.empty:
        return "compute used: no benchmark files"
    cpu, wall, jobs = compute["cpu_time"].sum(), compute["s"].sum(), int(compute["jobs"].sum())
    return f"compute used {cpu / 3600:.2f} CPU-h / {wall / 3600:.2f} wall-h over {jobs} jobs"


def scope_line(run: Run) -> str:
    """The one-line scope of the report (also printed by the CLI)."""
    configured = configured_datasets(run.config)
    m, n = len(configured), sum(d in configured for d in run.datasets)
    parts = [f"data sets with results {n} of the config's {m}"]
    if run.missing:
        parts[0] += f" (missing: {', '.join(run.missing)})"
    extra = [d for d in run.datasets if d not in configured]
    if extra:
        parts[0] += f", plus {len(extra)} not in the config ({', '.join(extra)})"
    parts += [
        f"methods {len(run.methods)}",
        _protocols_text(run),
        h_rule(run.config),
        restarts_text(run),
        budget_text(run),
        _compute_text(run.compute),
    ]
    parts.append(commits_text(run))
    return SCOPE_PREFIX + "; ".join(p for p in parts if p) + "."


def commits_text(run: Run) -> str:
    """The commits the fits were made at, as the evaluations record them (so that the
    report of an archive names the run's code, not the code reading it); the checkout's
    commit where no fit records one (results made before fits recorded their commit)."""
    commits = run.fits["git_commit"].fillna("").astype(str) if len(run.fits) else pd.Series([])
    made = commits[commits != ""].map(lambda c: c[:7] + ("-dirty" if c.endswith("-dirty") else ""))
    if made.empty:
        commit = git_commit()
        return f"commit `{commit}`" if commit else ""
    counts = made.value_counts()
    named = ", ".join(f"`{c}` ({n} fits)" for c, n in sorted(counts.items()))
    unrecorded = int((commits == "").sum())
    tail = f"; {unrecorded} fits made before commits were recorded" if unrecorded else ""
    return (
        f"fits made at commit {named}{tail}"
        if len(counts) == 1
        else (f"fits made at commits {named}{tail}")
    )


def _scope_section(run: Run) -> list[str]:
    lines = [scope_line(run), ""]
    if run.missing:
        lines += [
            f"*Partial results*: {_plural(len(run.missing), 'data set')} of the config's "
            f"{len(configured_datasets(run.config))} without a table yet; every comparison "
            "below covers only the data sets listed in it.",
            "",
        ]
    configured = set(run.config.get("methods") or {})
    absent = sorted(configured - set(run.methods))
    if absent:
        lines += [f"Methods of the config without results: {_code(absent)}.", ""]
    if not run.compute.empty:
        rows = [
            [
                f"`{step}`",
                str(int(r["jobs"])),
                f"{r['cpu_time'] / 3600:.3f}",
                f"{r['s'] / 3600:.3f}",
            ]
            for step, r in run.compute.iterrows()
        ]
        lines += ["Compute per workflow step (Snakemake benchmark files):", ""]
        lines += _table(["step", "jobs", "CPU-h", "wall-h"], rows, right={1, 2, 3})
    if len(run.settings_compute):
        rows = protocol_compute_rows(run.settings_compute)
        grid = (
            "; the label-tuned grid holds the defaults, and the label-free tuned protocol "
            "picks among the grid's runs and fits nothing of its own"
            if len(rows) > 1
            else ""
        )
        lines += [
            "Compute per protocol (the CPU each evaluated setting records for its fits and its "
            f"k-means restarts{grid}):",
            "",
        ]
        lines += _table(
            ["protocol", "data sets", "settings evaluated", "fit CPU-h", "k-means CPU-h"],
            rows,
            right={1, 2, 3, 4},
        )
    return lines


# -- sections --------------------------------------------------------------------------


def _protocol_section() -> list[str]:
    return [
        "## How parameters were chosen",
        "",
        "- **label-free** (primary): each method's documented default parameters "
        "(`ufs methods`); no labels are used before the evaluation. These are the "
        "unsupervised results.",
        "- **label-tuned** (secondary): for each method and h, the best setting of its "
        "registered grid by mean ACC on the even-numbered k-means restarts, reported on the "
        "odd-numbered ones (a choice and its score on the same restarts would be biased "
        "upwards). This **uses the labels** (as the papers do): an upper bound on what the "
        "method can do, not an unsupervised result; its chance reference is the best of as "
        "many random subsets as the method has settings.",
        "- **label-free tuned** (what a practitioner can use): from the same grid runs, "
        "each method's setting on a data set is the one with the best average rank on the "
        "*other* families — per other data set and h its settings ranked by mean "
        "ACC on the even restarts (ties share their mean rank, a setting without a score "
        "ranks last), the ranks averaged over h, over a family's data sets (a family "
        "counts once) and over the families; the simulations inform no choice. The labels "
        "of the data set's own family never enter. Ties of average rank go to the "
        "method's label-free default if it is one of them, else to the setting whose "
        "parameters come first as written. Reported, as the label-tuned rows are, on the "
        "odd restarts; its chance reference is the expected random subset on the same "
        "restarts (the choice did not see these labels). `ufs.stats.tuning` defines it.",
        "- **references**: `all_features` (no selection), `random` (the mean and 5-95 % band "
        "of `evaluation.reference_draws` independent random subsets per h, never one draw) "
        "and `max_variance`; bounds a method must beat, shown apart, never ranked.",
        "",
        "**Where the labels enter**, in every protocol: (1) the number of clusters k is the "
        "true number of classes, given to every method that needs one and to the k-means of "
        "the evaluation (the convention of the UFS literature; the same for every method); "
        "(2) the evaluation (ACC, NMI against the labels); (3) GOLFS's label-free defaults "
        "were chosen by a scan on the simulation `golfs_sim1` against its planted features "
        "(`docs/methods.md`, GOLFS), which is why the simulations are reported apart and "
        "never ranked in the primary view; (4) the label-tuned protocol's choice of setting, "
        "with the data set's own labels; (5) the label-free tuned protocol's choice, with "
        "the other families' labels only. Nothing else (h included) is chosen with the "
        "labels.",
        "",
        "**Input spaces** (one rule for the primary ranking): each method receives the "
        "matrix its registry entry declares — the authors' space where the paper or the "
        "authors' code fixes one (GOLFS raw and centred; DGUFS and LRPFS min-max scaled to "
        "[0, 1], as the authors' code feeds them), z-scores otherwise. SPCAFS's paper says "
        'only "normalized data"; `spcafs` reads it as z-scores, `spcafs_raw` (the reading '
        "that reproduces the paper's numbers, `docs/methods.md`) is a declared variant: the "
        "sensitivity view *spcafs_raw* ranks it in SPCAFS's place, and *Input scaling* below "
        "runs the seed methods on each other's spaces.",
        "",
    ]


def _ordered(results: list[ranking.RankResult]) -> list[ranking.RankResult]:
    """Label-free first, then label-free tuned, then label-tuned; ACC before NMI; protocols
    without scores dropped."""
    key = {
        (p, m): i
        for i, (p, m) in enumerate((p, m) for p in ranking.PROTOCOLS for m in ranking.METRICS)
    }
    kept = [r for r in results if not r.avg_rank.empty]
    return sorted(kept, key=lambda r: key.get((r.protocol, r.metric), len(key)))


def cd_path(img_dir: Path, protocol: str, metric: str) -> Path:
    return img_dir / f"benchmark_cd_{protocol}_{metric}.png"


def _rank_rows(results: list[ranking.RankResult]) -> list[list[str]]:
    methods = sorted({m for r in results for m in r.avg_rank.index})
    first = results[0].avg_rank
    methods.sort(key=lambda m: (first.get(m, np.inf), m))
    rows = []
    for m in methods:
        cells = [rank_report.rank_text(r, m) if m in r.avg_rank else "–" for r in results]
        rows.append([f"`{m}`"] + cells)
    return rows


def _stats_rows(results: list[ranking.RankResult], figures: dict) -> list[list[str]]:
    rows = []
    for r in results:
        cells = rank_report.statistics_cells(r)
        fig = figures.get((r.protocol, r.metric))
        link = f"[diagram]({fig})" if fig else "–"
        rows.append([TITLES[r.protocol], r.metric.upper(), str(r.k), str(r.n)] + cells + [link])
    return rows


def _rank_notes(results: list[ranking.RankResult]) -> list[str]:
    lines = rank_report.rank_notes(results, titles=TITLES, name=lambda n: f"`{n}`")
    return lines + ([""] if lines else [])


def _ranks_section(
    results: list[ranking.RankResult],
    img_dir: Path,
    out_md: Path,
    plots: bool,
    tables: pd.DataFrame,
) -> list[str]:
    lines = ["## Average ranks across data sets (primary view)", ""]
    results = _ordered(results)
    if not results:
        return lines + ["No method has a score under any protocol.", ""]
    figures = {}
    for r in results:
        path = cd_path(img_dir, r.protocol, r.metric)
        if plots:
            rank_report.plot_cd(r, path)
        figures[(r.protocol, r.metric)] = Path(os.path.relpath(path, out_md.parent)).as_posix()
    header = ["method"] + [f"{TITLES[r.protocol]} {r.metric.upper()}" for r in results]
    lines += [
        "Average rank over the data sets (1 = best); sorted by the first column; "
        f"{rank_report.TIE_LEGEND}. "
        + ("Label-tuned ranks use the labels." if len({r.protocol for r in results}) > 1 else ""),
        "",
    ]
    lines += _table(header, _rank_rows(results), right=set(range(1, len(header))))
    alpha = results[0].alpha
    header = ["protocol", "metric", "k", "N", "Friedman χ²", "p", "Iman–Davenport F", "p"]
    header += [f"CD (α = {alpha:g})", "CD diagram"]
    lines += _table(header, _stats_rows(results, figures), right=set(range(2, 9)))
    lines += _rank_notes(results)
    flagged = mostly_flagged_leaders(results, tables)
    lines += [*(f"- {t}" for t in flagged), ""] if flagged else []
    lines += [
        "The CD diagrams below are pictures of the average ranks (Nemenyi's critical "
        "difference drawn as a bar); mean ranks depend on which other methods are compared "
        "(Benavoli, Corani & Mangili, JMLR 2016), so they decide no pair: the pairs are "
        "decided by the all-pairs Wilcoxon–Holm tests (*Which pairs the paired tests "
        "order*). Bold names are the seed papers' methods.",
        "",
    ]
    for r in results:
        fig = figures[(r.protocol, r.metric)]
        lines += [
            f"![CD diagram, {TITLES[r.protocol]} {r.metric.upper()}]({fig})",
            "",
            f"*{rank_report.cd_caption(r)}*",
            "",
        ]
    return lines


def _scores(run: Run, protocol: str, metric: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, statuses) data sets × methods, in the report's data set order."""
    scores, status = ranking.dataset_scores(run.tables, protocol, metric)
    if scores.empty:
        return scores, status
    order = [d for d in run.datasets if d in scores.index]
    return scores.loc[order], status.loc[order]


def _candidates(scores: pd.Series, status: pd.Series, roles: pd.Series) -> pd.Series:
    """A data set's scores of the competitors (not the references, not the declared
    variants) that did not exceed the budget, best first."""
    ok = [m for m in scores.index if roles.get(m, "method") == "method" and status.get(m) != BUDGET]
    return scores[ok].dropna().sort_values(ascending=False, kind="stable")


def _pick(ranked: pd.Series, i: int) -> tuple[Any, float]:
    return (ranked.index[i], float(ranked.iloc[i])) if len(ranked) > i else (None, np.nan)


def best_per_dataset(run: Run, protocol: str, metric: str) -> pd.DataFrame:
    """Per data set: best and runner-up method (mean-over-h score; ``all_features`` and
    budget-exceeded methods excluded), their fit statuses, the methods tied with the best
    and with the runner-up (equal scores: ``best_ties``, ``runner_up_ties``, the named
    method included) and the ``all_features`` score."""
    scores, status = _scores(run, protocol, metric)
    roles = ranking.method_roles(run.tables)
    rows = []

    def tied_at(ranked: pd.Series, score: float) -> list[str]:
        at = np.isclose(ranked.to_numpy(), score, rtol=0, atol=1e-12)
        return sorted(str(m) for m in ranked.index[at])

    for d in scores.index:
        ranked = _candidates(scores.loc[d], status.loc[d], roles)
        (best, b), (second, s) = _pick(ranked, 0), _pick(ranked, 1)
        ties = tied_at(ranked, b) if best is not None else []
        # the runner-up is the best score not tied with the best
        rest = ranked[~ranked.index.isin(ties)] if ties else ranked.iloc[1:]
        (second, s) = _pick(rest, 0)
        second_ties = tied_at(rest, s) if second is not None else []
        ref = scores.loc[d].get(REFERENCE, np.nan)
        rows.append(
            {"dataset": d, "best": best, "best_score": b, "runner_up": second}
            | {"runner_up_score": s, "reference": ref, "best_ties": ties}
            | {"runner_up_ties": second_ties}
            | {"best_status": status.loc[d].get(best, "ok") if best is not None else "ok"}
            | {"runner_up_status": status.loc[d].get(second, "ok") if second is not None else "ok"}
        )
    return pd.DataFrame(rows)


def _best_section(run: Run) -> list[str]:
    lines = [
        "## Best per data set",
        "",
        "Best and runner-up competitor by the mean over h of the mean over restarts (%), with "
        "the marks of the fits behind them (a flagged best is a flagged number); methods with "
        "exactly equal scores are all named, as best or as runner-up (`a` = `b`: a tie, no "
        "order); "
        f"`{REFERENCE}` (no selection) is the reference beside them, not a candidate (nor are "
        "the other references and the declared variants); a method over the budget "
        f"({STATUS_MARK[BUDGET]}) is not a candidate on that data set. A best method here is "
        "a description of one data set, not a significant difference (see *What the tests "
        "support*).",
        "",
    ]
    for metric in ranking.METRICS:
        rows = []
        tabs = {p: best_per_dataset(run, p, metric).set_index("dataset") for p in run.protocols}
        for d in run.datasets:
            for p in run.protocols:
                if d not in tabs[p].index:
                    continue
                r = tabs[p].loc[d]
                rows.append(
                    [f"{d} ({_shape(run, d)})", TITLES[p]]
                    + _named_or_tied(r, "best")
                    + _named_or_tied(r, "runner_up")
                    + [_pct(r["reference"])]
                )
        header = ["data set (n × p, classes)", "protocol", "best", metric.upper()]
        header += ["runner-up", metric.upper(), f"`{REFERENCE}`"]
        lines += [f"**{metric.upper()}**", ""] + _table(header, rows, right={3, 5, 6})
    return lines


def _named_or_tied(r: pd.Series, which: str) -> list[str]:
    """The best (``which = "best"``) or runner-up of a row of :func:`best_per_dataset`:
    its name, or the tied methods' names joined by ``=`` (a tie names no one first), and
    the score."""
    ties = list(r[f"{which}_ties"])
    if len(ties) > 1:
        return [" = ".join(f"`{m}`" for m in ties), _pct(r[f"{which}_score"])]
    return _named(r[which], r[f"{which}_score"], r[f"{which}_status"])


def _named(method: Any, score: float, status: Any = "ok") -> list[str]:
    if method is None or pd.isna(method):
        return ["–", "–"]
    return [f"`{method}`", _pct(score) + _mark(status)]


def _scores_section(run: Run) -> list[str]:
    scores, status = _scores(run, "label_free", "acc")
    lines = ["## Per data set scores (label-free ACC %)", ""]
    if scores.empty:
        return lines + ["The label-free protocol was not run.", ""]
    res = ranking.rank_methods(run.tables, "label_free", "acc", view=views.PRIMARY)
    roles = ranking.method_roles(run.tables)
    order = [m for m in res.avg_rank.index if m in scores.columns]
    rest = sorted(set(scores.columns) - set(order))
    order += sorted(rest, key=lambda m: ({"method": 0, "variant": 1}.get(roles.get(m), 2), m))
    lines += [
        "Mean over h of the mean over restarts; competitors by label-free ACC average rank, "
        "then the declared variants, then the references (in italics; `random` is the "
        "expected score of a random subset: the mean over its draws); the best competitor of "
        "each row in bold. " + _legend(),
        "",
    ]
    rows = []
    for d in scores.index:
        ranked = _candidates(scores.loc[d], status.loc[d], roles)
        top = ranked.iloc[0] if len(ranked) else np.nan
        rows.append(
            [d]
            + [
                _score_cell(scores.loc[d, m], status.loc[d, m], top, m, roles.get(m, "method"))
                for m in order
            ]
        )
    names = [f"_`{m}`_" if roles.get(m) == "reference" else f"`{m}`" for m in order]
    return lines + _table(["data set"] + names, rows, set(range(1, 99)))


def _score_cell(x: float, status: Any, top: float, method: str, role: str = "method") -> str:
    if status == BUDGET:
        return f"–{_mark(status)}"
    text = _pct(x) + _mark(status)
    if role == "method" and not pd.isna(x) and x == top:
        text = f"**{text}**"
    return text


def _legend() -> str:
    names = {
        "not_converged": "not converged",
        "diverged": "diverged",
        BUDGET: "budget exceeded",
        "degenerate": "degenerate (round-off or a trivial rule decided the answer)",
    }
    return "; ".join(f"{STATUS_MARK[s]} {names[s]}" for s in FAILURES if s in STATUS_MARK) + "."


def _gap(run: Run, tuned: str, metric: str) -> dict[str, tuple[float, int]]:
    """method → (mean over the real data sets with both protocols, neither over the budget,
    of ``tuned`` − label-free ``metric``, their number)."""
    lf, lfs = _scores(run, "label_free", metric)
    tu, tus = _scores(run, tuned, metric)
    out = {}
    for m in sorted(set(lf.columns) & set(tu.columns)):
        both = lf.index.intersection(tu.index)
        keep = [
            d
            for d in both
            if not views.is_simulation(str(d))
            and not (pd.isna(lf.loc[d, m]) or pd.isna(tu.loc[d, m]))
            and BUDGET not in (lfs.loc[d, m], tus.loc[d, m])
        ]
        diff = (tu.loc[keep, m] - lf.loc[keep, m]).to_numpy(dtype=float)
        out[m] = (float(diff.mean()) if diff.size else np.nan, len(keep))
    return out


def label_gap(run: Run) -> pd.DataFrame:
    """Per method: mean over the real data sets with both protocols (neither over the
    budget; simulations apart, as in the primary view) of label-tuned − label-free ACC and
    NMI (fractions), their count, the same of label-free tuned − label-free
    (``d_<metric>_free_tuned``, NaN where it did not run), the primary view's average ACC
    rank under each protocol and the number of grid settings tuned over."""
    results = {(r.protocol, r.metric): r for r in ranking.rank_all(run.tables, view=views.PRIMARY)}
    gaps: dict[str, dict[str, Any]] = {}
    for metric in ranking.METRICS:
        free_tuned = _gap(run, tuning.PROTOCOL, metric)
        for m, (d, n) in _gap(run, "oracle", metric).items():
            g = gaps.setdefault(m, {"method": m})
            g[f"d_{metric}"], g[f"n_{metric}"] = d, n
            g[f"d_{metric}_free_tuned"] = free_tuned.get(m, (np.nan, 0))[0]
    oracle = run.tables[run.tables["protocol"] == "oracle"]
    settings = oracle.groupby("method")["n_settings"].max() if "n_settings" in oracle else {}
    for m, g in gaps.items():
        for p in ranking.PROTOCOLS:
            avg = results[(p, "acc")].avg_rank
            g[f"rank_{p}"] = float(avg[m]) if m in avg else np.nan
        g["settings"] = int(settings[m]) if m in settings else None
    cols = ["method", "d_acc", "d_nmi", "n_acc", "n_nmi", "d_acc_free_tuned", "d_nmi_free_tuned"]
    cols += [f"rank_{p}" for p in ranking.PROTOCOLS]
    out = pd.DataFrame(list(gaps.values()), columns=cols + ["settings"])
    return out.sort_values(["d_acc", "method"], ascending=[False, True], na_position="last")


def tuned_choices(run: Run) -> pd.DataFrame:
    """Per competitor with label-free tuned rows: its label-free default (``default``, the
    parameters as written) and the settings the other families chose (``chosen``: a list
    of (parameters, data sets, whether it is the default), most data sets first)."""
    part = run.tables[run.tables["protocol"] == tuning.PROTOCOL]
    roles = ranking.method_roles(run.tables)
    free = run.tables[run.tables["protocol"] == "label_free"]
    rows = []
    for m, g in part.drop_duplicates(["dataset", "method"]).groupby("method", sort=True):
        if roles.get(m, "method") != "method":
            continue
        default = free.loc[free["method"] == m, "params"]
        counts = g.groupby("params", sort=True).agg(
            n=("dataset", "size"), default=("label_free", "any")
        )
        counts = counts.sort_values("n", ascending=False, kind="stable")
        rows.append(
            {
                "method": m,
                "default": str(default.iloc[0]) if len(default) else "–",
                "chosen": [(str(k), int(r["n"]), bool(r["default"])) for k, r in counts.iterrows()],
                "datasets": int(g["dataset"].nunique()),
            }
        )
    return pd.DataFrame(rows, columns=["method", "default", "chosen", "datasets"])


def _rank_or_dash(x: Any) -> str:
    return "–" if x is None or pd.isna(x) else f"{x:.2f}"


def _gap_section(run: Run) -> list[str]:
    lines = ["## How much does a method owe to the labels?", ""]
    if "oracle" not in run.protocols:
        return lines + ["The label-tuned protocol was not run: no gap to report.", ""]
    lines += [
        "Mean over the real data sets (N; the simulations apart) of label-tuned minus "
        "label-free score, in percentage points; a large gap means the method's published "
        "numbers rest on tuning with the labels. Beside it, label-free tuned minus "
        "label-free: what the setting the other families' labels choose buys over the "
        "default, without this data set's labels. A description, not a test: with N this "
        "small no paired test could call a gap significant (*What these N can show*). "
        "Average ACC ranks of the primary view under each protocol; grid settings tuned over "
        "per h.",
        "",
    ]
    rows = [
        [
            f"`{r['method']}`",
            _pp(r["d_acc"]),
            _pp(r["d_nmi"]),
            str(r["n_acc"]),
            _pp(r["d_acc_free_tuned"]),
            _pp(r["d_nmi_free_tuned"]),
            *(_rank_or_dash(r[f"rank_{p}"]) for p in ranking.PROTOCOLS),
            "–" if r["settings"] is None or pd.isna(r["settings"]) else str(int(r["settings"])),
        ]
        for _, r in label_gap(run).iterrows()
    ]
    header = ["method", "Δ ACC (pp)", "Δ NMI (pp)", "N", "Δ ACC label-free tuned (pp)"]
    header += ["Δ NMI label-free tuned (pp)"]
    header += [f"rank {TITLES[p]}" for p in ranking.PROTOCOLS]
    lines += _table(header + ["grid settings"], rows, right=set(range(1, len(header) + 1)))
    choices = tuned_choices(run)
    if choices.empty:
        return lines
    lines += [
        "**The settings the other families chose** (label-free tuned): per competitor, its "
        "label-free default and each setting chosen for a data set with the labels of the "
        "other families (the number of data sets it was chosen for; *default*: the default "
        "itself).",
        "",
    ]
    rows = [
        [
            f"`{r['method']}`",
            f"`{r['default']}`",
            "; ".join(
                f"`{params}` ({n}{', default' if is_default else ''})"
                for params, n, is_default in r["chosen"]
            ),
        ]
        for _, r in choices.iterrows()
    ]
    return lines + _table(["method", "label-free default", "chosen (data sets)"], rows)


def run_time(run: Run) -> pd.DataFrame:
    """Per method: median and max over data sets of the summed fit seconds (all fits, and
    the label-free fits alone), total fit seconds and the number of fits."""
    f = run.fits
    cols = ["method", "median", "max", "lf_median", "total", "fits"]
    if f.empty:
        return pd.DataFrame(columns=cols)
    per = f.groupby(["method", "dataset"])["fit_seconds"].sum()
    lf = f[f["label_free"]].groupby(["method", "dataset"])["fit_seconds"].sum()
    lf_median = lf.groupby(level="method").median()
    out = pd.DataFrame(
        {
            "median": per.groupby(level="method").median(),
            "max": per.groupby(level="method").max(),
            "lf_median": lf_median,
            "total": f.groupby("method")["fit_seconds"].sum(),
            "fits": f.groupby("method").size(),
        }
    )
    return out.reset_index().sort_values(["median", "method"])[cols]


def _runtime_section(run: Run) -> list[str]:
    lines = [
        "## Run time",
        "",
        "Fit seconds (the solver's `fit` call, wall clock, one BLAS thread) per method: the "
        "median and max over the data sets of the method's summed fit time on a data set "
        "(every grid setting and h), the median of its label-free fits alone, the total over "
        "all data sets and the number of fits (a ranking method fits once for every h).",
        "",
    ]
    t = run_time(run)
    if t.empty:
        return lines + ["No evaluation files: no fit times.", ""]
    rows = [
        [f"`{r['method']}`", _secs(r["median"]), _secs(r["max"]), _secs(r["lf_median"])]
        + [_secs(r["total"]), str(int(r["fits"]))]
        for _, r in t.iterrows()
    ]
    header = ["method", "median s / data set", "max s", "label-free median s"]
    lines += _table(header + ["total s", "fits"], rows, right={1, 2, 3, 4, 5})
    note = first_fit_set_up_text(run)
    return lines + ([note, ""] if note else [])


#: the commit from which a job's first fit is timed without the process's one-time library
#: set-up (:mod:`ufs.pipeline.warm_up`)
WARM_UP_COMMIT = "fe309ad956bd49d0f68551c07bfcd138c06f1f4f"


def _has_warm_up(commit: str) -> bool:
    """Whether ``commit`` (a fit's recorded commit) descends from :data:`WARM_UP_COMMIT`;
    ``False`` when git or this checkout cannot tell."""
    sha = commit.removesuffix("-dirty")
    if not sha:
        return False
    try:
        subprocess.run(
            ["git", "merge-base", "--is-ancestor", WARM_UP_COMMIT, sha],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def first_fit_set_up_text(run: Run) -> str:
    """A sentence on the fits timed with the process's one-time library set-up (~10 ms in
    the first fit of each fit job, before :mod:`ufs.pipeline.warm_up`), naming the methods
    whose times that mostly is (median fit under 0.05 s); ``""`` when every fit was timed
    without it."""
    f = run.fits
    if f.empty:
        return ""
    commits = f["git_commit"].fillna("").astype(str)
    known = {c: _has_warm_up(c) for c in commits.unique()}
    before = f[~commits.map(known).astype(bool)]
    if before.empty:
        return ""
    fast = before.groupby("method")["fit_seconds"].median()
    fast = sorted(fast[fast < 0.05].index)
    named = ", ".join(f"`{m}`" for m in fast)
    which = f"All {len(f)} fits" if len(before) == len(f) else f"{len(before)} of the {len(f)} fits"
    verb = "was" if len(before) == 1 else "were"
    return (
        f"{which} {verb} timed before `ufs.pipeline.warm_up` (commit `{WARM_UP_COMMIT[:7]}`, "
        "or at a commit this checkout cannot place): the first fit of each fit job then also "
        "paid the process's one-time library set-up (~10 ms, measured 2026-11-29: "
        "scikit-learn's first feature-name check reads every installed package's entry "
        "points), so fit times of a few hundredths of a second are mostly that set-up"
        + (f", not the method ({named}: median fit under 0.05 s)." if named else ".")
    )


def missing_estimate(run: Run) -> tuple[pd.DataFrame, Any, pd.DataFrame]:
    """The estimated CPU time of the config's data sets without results
    (:mod:`ufs.pipeline.cost_estimate`: per-method models fitted on this run's own label-free
    fits, the budget rule applied), the model, and the same estimate checked on each
    measured data set held out (:func:`~ufs.pipeline.cost_estimate.held_out_ratios`); empty
    frames when none is missing."""
    from ..pipeline.config import resolve_h
    from ..pipeline.cost_estimate import (
        estimate_missing,
        fit_cost_model,
        fit_costs,
        held_out_ratios,
        missing_shapes,
    )

    if not run.missing:
        return pd.DataFrame(), None, pd.DataFrame()
    shapes = {d: run.shapes[d] for d in run.datasets}
    files = sorted((run.results_dir / "evaluations").glob("*/*.json"))
    costs = fit_costs(files, shapes)
    model = fit_cost_model(costs)
    budget = float((run.config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    kinds = method_kinds(run.config)
    shapes_missing = missing_shapes(run.missing, run.config)
    grids = run.config.get("datasets") or {}
    hs = {
        d: list(resolve_h((grids.get(d) or {}).get("h"), shapes[d][1]))
        for d in run.datasets
        if None not in shapes[d]
    }
    checked = held_out_ratios(costs, hs, kinds, budget)
    return estimate_missing(model, shapes_missing, kinds, budget), model, checked


def method_kinds(config: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """Each configured method's kind and number of label-free fits per data set (the
    reference draws of ``random``), as :func:`ufs.pipeline.cost_estimate.estimate_missing`
    takes them; a method not registered here counts as one ranking fit (and, without a
    cost model, is listed as unmodelled)."""
    from ..registry import get_method

    draws = int((config.get("evaluation") or {}).get("reference_draws", 30))
    methods = {}
    for m in config.get("methods") or {}:
        try:
            spec = get_method(m)
        except ValueError:
            methods[m] = ("ranking", 1)
            continue
        methods[m] = (spec.kind, draws if spec.draws else 1)
    return methods


def _missing_section(run: Run) -> list[str]:
    est, model, checked = missing_estimate(run)
    if est.empty:
        return []
    ratios = checked["ratio"].dropna()
    worst = float(ratios.max()) if len(ratios) else float("nan")
    if len(ratios):
        top = checked.dropna(subset=["ratio"]).nlargest(3, "ratio")
        held = (
            f"Held out one at a time, the run's {len(ratios)} measured data sets took "
            f"{ratios.min():.2f}–{worst:.2f} times their estimate (median {ratios.median():.2f}); "
            "the largest ratios: "
            + ", ".join(f"{r.dataset} ({r.n} × {r.p}) {r.ratio:.2f}" for r in top.itertuples())
            + '. The column "× largest held-out ratio" multiplies each estimate by '
            "the largest ratio: a figure to plan with, still not a bound."
        )
    else:
        held = "No measured data set could be held out to check the estimate."
    lines = [
        "## Data sets not run yet, and what they would cost",
        "",
        "Estimated CPU time of the label-free protocol on each data set of the config without "
        "results (`ufs.pipeline.cost_estimate`): per method, a log-linear model of one fit's CPU "
        "time in n, p and h, fitted on this run's own label-free fits, each predicted fit "
        "clipped at the budget (a setting's larger h skipped once one is over it), plus the "
        "k-means evaluation; job start-up is not included. The fits behind the models are of "
        "smaller data sets than most of these, so this is an extrapolation: a method whose "
        "cost grows faster than a power law fitted at small n and p (RNE's dense p × p "
        "products, the n × n graph learners) is underestimated there, each of its fits still "
        "capped at the budget. Within the measured range the models' median leave-one-data-set-out error "
        f"is a factor {np.exp(np.nanmedian(list(model.loo_log_error.values()))):.1f} per fit. "
        + held,
        "",
    ]
    rows = []
    for _, r in est.iterrows():
        rows.append(
            [
                f"{r['dataset']} ({r['n']} × {r['p']}, {r['c']})",
                f"{(r['fit_cpu'] + r['kmeans_cpu']) / 3600:.2f}",
                f"{r['fit_cpu'] / 3600:.2f}",
                f"{r['kmeans_cpu'] / 3600:.2f}",
                f"{(r['fit_cpu'] + r['kmeans_cpu']) * worst / 3600:.2f}",
                (_code(r["over_budget"]) if r["over_budget"] else "none")
                + (
                    f"; no model (no fit measured): {_code(r['unmodelled'])}"
                    if r["unmodelled"]
                    else ""
                ),
            ]
        )
    total = (est["fit_cpu"].sum() + est["kmeans_cpu"].sum()) / 3600
    rows.append(["**total**", f"**{total:.2f}**", "", "", f"**{total * worst:.2f}**", ""])
    header = [
        "data set",
        "CPU-h (estimate)",
        "fits",
        "k-means",
        "CPU-h × largest held-out ratio",
        "predicted over the budget",
    ]
    return lines + _table(header, rows, right={1, 2, 3, 4})


def failures(run: Run) -> pd.DataFrame:
    """Per method: fits and the counts of not-converged / diverged / budget-exceeded /
    degenerate fits, with the data sets each happened on (``{dataset: count}``). A fit
    counts under every flag that applies: ◊ by its own flag also where its status is †
    (:func:`ufs.report.aggregate.degenerate_flag`)."""
    rows = []
    for m, g in run.fits.groupby("method", sort=True):
        row: dict[str, Any] = {"method": m, "fits": len(g)}
        for s in FAILURES:
            # ◊ by the fit's own flag too: a fit is counted under every flag that applies
            bad = g[degenerate_fits(g)] if s == "degenerate" else g[g["status"] == s]
            row[s] = len(bad)
            row[f"{s}_on"] = bad.groupby("dataset").size().to_dict()
        rows.append(row)
    return pd.DataFrame(rows)


def _on(counts: dict[str, int]) -> str:
    return ", ".join(f"{d} ({n})" for d, n in counts.items())


def _failures_section(run: Run) -> list[str]:
    lines = ["## Failures and degenerate fits", ""]
    t = failures(run)
    if t.empty:
        return lines + ["No evaluation files: no fit statuses.", ""]
    bad = t[t[list(FAILURES)].sum(axis=1) > 0]
    if bad.empty:
        return lines + [f"No fit failed or was degenerate ({int(t['fits'].sum())} fits).", ""]
    mark = lambda s: STATUS_MARK.get(s, "")  # noqa: E731
    lines += [
        "Fits per method over all data sets, every grid setting and h counted "
        f"({int(t['fits'].sum())} fits); data sets with the number of such fits. A fit is "
        "counted under every flag that applies: ◊ also where the score tables show † (its "
        "status: not converged comes first). " + _legend(),
        "",
    ]
    rows = []
    for _, r in bad.iterrows():
        where = "; ".join(
            f"{mark(s)} {_on(r[f'{s}_on'])}" for s in FAILURES if r[f"{s}_on"] and mark(s)
        )
        rows.append([f"`{r['method']}`", str(r["fits"])] + [str(r[s]) for s in FAILURES] + [where])
    header = ["method", "fits", "† not converged", "‡ diverged", "§ budget exceeded"]
    header += ["◊ degenerate", "on"]
    lines += _table(header, rows, right={1, 2, 3, 4, 5})
    return lines + _causes_lines(bad, run) + _budget_by_dataset(run)


def _causes_lines(bad: pd.DataFrame, run: Run) -> list[str]:
    """The measured cause of each method's flags (:mod:`ufs.report.flag_causes`); a method
    flagged on more than a quarter of the data sets without one is named as such."""
    n_data = max(1, len(run.datasets))
    lines = [
        "**Why they are flagged** (measured; a paragraph per method in `docs/methods.md`, "
        "tables in `benchmarks/flag_causes/`):",
        "",
    ]
    for _, r in bad.iterrows():
        m = r["method"]
        on = set()
        for s in ("not_converged", "degenerate", "diverged"):
            on |= set(r[f"{s}_on"])
        cause = flag_causes.FLAG_CAUSES.get(m)
        if cause is not None:
            lines.append(
                f"- `{m}` ({len(on)} of {n_data} data sets): "
                f"{flag_causes.CAUSE_KINDS[cause.kind]} — {cause.finding} (`{cause.script}`)."
            )
        elif len(on) > n_data / 4:
            lines.append(f"- `{m}` ({len(on)} of {n_data} data sets): **no measured cause yet**.")
    return lines + [""] if len(lines) > 2 else []


def _budget_by_dataset(run: Run) -> list[str]:
    over = run.fits[run.fits["status"] == BUDGET]
    if over.empty:
        return []
    lines = ["Budget exceeded, by data set (scored as the expected random subset at those h):", ""]
    for d in [d for d in run.datasets if d in set(over["dataset"])]:
        g = over[over["dataset"] == d].groupby("method")
        parts = []
        for m, fits in g:
            kinds = sorted({str(x).split(":", 1)[0] for x in fits["budget_reason"] if x})
            why = f": {', '.join(kinds)}" if kinds else ""
            parts.append(f"`{m}` ({_plural(len(fits), 'fit')}{why})")
        lines.append(f"- {d}: " + ", ".join(parts))
    return lines + [""]


def _reading(run: Run, alpha: float) -> list[str]:
    restarts = restarts_text(run).split(" k-means")[0]
    return [
        "## Reading this",
        "",
        f"A score is the mean over the data set's h grid of the mean over {restarts} k-means "
        "restarts (ACC, NMI in %). Ranks: 1 = best, per data set or family (ties averaged), "
        "then averaged. Missing results: " + views.MISSING_DATA_RULE + " The Friedman test "
        "asks whether all methods are equivalent (Demšar, JMLR 7, 2006); where it rejects, "
        "the all-pairs Wilcoxon signed-rank tests with Holm's correction say which pairs "
        f"differ at α = {alpha:g}; the Nemenyi CD in the diagrams is a picture. " + _legend(),
        "",
    ]


def _scaling_section(run: Run, scaling_dir: str | Path | None) -> list[str]:
    """The input-scaling comparison (:mod:`ufs.stats.input_scaling`), when its runs exist."""
    if scaling_dir is None or not Path(scaling_dir).is_dir():
        return []
    from ..stats.input_scaling import load_scaling_tables, scaling_markdown

    tables = load_scaling_tables(run.tables, scaling_dir)
    tables = tables[tables["dataset"].isin(run.datasets)]
    return [scaling_markdown(tables), ""]


# -- the primary view, its resolution, its pairs ---------------------------


def _view_intro(results: list[ranking.RankResult]) -> str:
    """What the verdicts below are computed on: the primary view in words."""
    r = next((r for r in results if not r.avg_rank.empty), None)
    if r is None:
        return ""
    fams = "; ".join(f"{f}: {', '.join(ms)}" for f, ms in sorted(r.families.items()))
    sims = ", ".join(r.simulations) or "none"
    return (
        f"**Primary view** ({views.PRIMARY.title}): data sets drawn from one source count "
        f"once, by the median of their members' scores ({fams or 'no family has two members here'}); "
        f"the simulations ({sims}) are reported apart (*Simulations*), never ranked. Every "
        "line below uses one N for all its tests. How each verdict moves under other rules: "
        "*How the verdicts move with the rules*."
    )


def _resolution_lines(results: list[ranking.RankResult]) -> list[str]:
    lines = []
    seen = set()
    for r in _ordered(results):
        key = (r.protocol, r.k, r.n)
        if key in seen or not r.applicable:
            continue
        seen.add(key)
        lines.append(
            f"- {TITLES[r.protocol]}: "
            + answer.resolution_sentence(r.k, r.n, r.alpha, answer.unit(r))
        )
    if not lines:
        return []
    return ["**What these N can show**, per protocol:", "", *lines, ""]


def _pairs_section(results: list[ranking.RankResult], pairs: dict) -> list[str]:
    lines = [
        "## Which pairs the paired tests order",
        "",
        "All pairs of competitors, per protocol and metric, on the primary view's data: "
        "Wilcoxon signed-rank test of the paired scores (two-sided), Holm-corrected over all "
        "the pairs; W/T/L of the first method; the median difference (points) with a "
        "bootstrap 95 % CI. Listed: the pairs ordered at α (only where the Friedman test "
        "rejects); every other pair cannot be ordered by these data.",
        "",
    ]
    for r in _ordered(results):
        t = pairs.get((r.protocol, r.metric))
        if t is None or t.empty:
            continue
        rejects = r.applicable and r.pvalue < r.alpha
        part = t[t["ordered"]] if rejects else t.iloc[0:0]
        head = f"**{TITLES[r.protocol]} {r.metric.upper()}** ({len(part)} of {len(t)} pairs ordered"
        if not rejects:
            head += "; the Friedman test does not reject, no pair is tested further"
        lines += [head + ")", ""]
        if part.empty:
            continue
        rows = [
            [
                f"`{x['a']}`",
                f"`{x['b']}`",
                str(int(x["n"])),
                f"{int(x['wins'])}/{int(x['ties'])}/{int(x['losses'])}",
                f"{_pp(x['median_diff'])} [{_pp(x['ci_low'])}, {_pp(x['ci_high'])}]",
                references._p(x["p_holm"]),
            ]
            for _, x in part.iterrows()
        ]
        header = ["better", "worse", "N", "W/T/L", "median diff [95 % CI]", "p (Holm)"]
        lines += _table(header, rows, right={2, 5})
    return lines


def _simulations_section(run: Run) -> list[str]:
    sims = [d for d in run.datasets if views.is_simulation(d)]
    if not sims:
        return []
    lines = [
        "## Simulations (reported apart, not ranked)",
        "",
        "Generated data sets with planted features (GOLFS's Examples 1 and 2): a model one "
        "method was designed for, and `golfs_sim2` plants a raw-variance signal that z-scoring "
        "removes (every method on z-scores scores near chance there, GOLFS, on raw input, far "
        "above). GOLFS's label-free defaults were chosen on `golfs_sim1`. Label-free ACC % "
        "(mean over h); TP: planted features among the selected, at the largest h.",
        "",
    ]
    scores, status = _scores(run, "label_free", "acc")
    roles = ranking.method_roles(run.tables)
    methods = [m for m in scores.columns if roles.get(m, "method") == "method"]
    methods += [m for m in scores.columns if roles.get(m) == "reference"]
    tp = _true_positives(run, sims)
    rows = []
    for m in methods:
        cells = [f"`{m}`"]
        for d in sims:
            x = scores.loc[d, m] if d in scores.index else np.nan
            st = status.loc[d, m] if d in status.index else "ok"
            cells.append(_pct(x) + _mark(st))
            cells.append(tp.get((d, m), "–"))
        rows.append(cells)
    header = ["method"]
    for d in sims:
        header += [f"{d} ACC", f"{d} TP"]
    return lines + _table(header, rows, right=set(range(1, 1 + 2 * len(sims))))


def _true_positives(run: Run, sims: list[str]) -> dict[tuple[str, str], str]:
    """(data set, method) → planted features found at the largest h (label-free rows)."""
    t = run.tables
    if "tp" not in t:
        return {}
    part = t[(t["protocol"] == "label_free") & t["dataset"].isin(sims) & t["tp"].notna()]
    out = {}
    for (d, m), g in part.groupby(["dataset", "method"]):
        g = g[pd.to_numeric(g["h"], errors="coerce").notna()]
        if g.empty:
            continue
        top = g.loc[pd.to_numeric(g["h"]).idxmax()]
        out[(d, m)] = f"{float(top['tp']):.1f}"
    return out


# -- the report ------------------------------------------------------------------------


def benchmark_report(
    results_dir: str | Path,
    config_path: str | Path,
    out_md: str | Path,
    *,
    img_dir: str | Path,
    plots: bool = True,
    note: str = "",
    include_variants: bool = False,
    min_h_values: int = 3,
    input_scaling: str | Path | None = None,
    source: str | None = None,
    absolute_h: str | Path | None = None,
    absolute_h_report: str = "",
    title: str = "UFS-bench: every method on every data set",
    lead=None,
) -> str:
    """Write the benchmark report ``out_md`` (atomically) and the CD diagrams into
    ``img_dir``; return the markdown. ``lead(run, results, tests, pairs)``: markdown lines
    to open the report with, from the statistics computed here (``ufs compare``'s
    *Where … stands*, :mod:`ufs.report.placement`), under ``title``. ``plots=False`` skips drawing the diagrams (their
    links stay); ``note``: how the run was made (overrides, slices), printed under the
    scope; ``source``: what the report says it was generated from (default
    ``results_dir``); ``absolute_h``: the archive of the absolute h view's run
    (:mod:`ufs.report.absolute_h`), compared in its own section and a row of the
    sensitivity table; ``absolute_h_report``: a link to that run's own report. Raises
    :class:`NoResultsError` when ``results_dir`` has no tables."""
    out_md, img_dir = Path(out_md), Path(img_dir)
    run = load_run(results_dir, config_path)
    # a config's own families (``family:``) join the registered ones in every view
    with views.extra_families(config_families(run.config)):
        absolute = load_archived_run(absolute_h) if absolute_h is not None else None
        choices = {"include_variants": include_variants, "min_h_values": min_h_values}
        view = views.PRIMARY
        results = ranking.rank_all(run.tables, view=view, **choices)
        alpha = results[0].alpha if results else 0.05
        tests = references.all_reference_tests(
            run.tables, alpha=alpha, view=view, results=results, **choices
        )
        pairs = pairwise_results(results, families_of=view)
        views_of: dict[tuple[str, str], dict] = {}  # the sensitivity views, computed once

        def sensitivity_of(protocol: str, metric: str) -> dict:
            if (protocol, metric) not in views_of:
                views_of[(protocol, metric)] = sensitivity.sensitivity(
                    run.tables,
                    protocol=protocol,
                    metric=metric,
                    alpha=alpha,
                    min_h_values=min_h_values,
                )
            return views_of[(protocol, metric)]

        kept = robustness.verdict_robustness(
            run.tables, results, tests, view=view, sensitivity_of=sensitivity_of, **choices
        )
        parts = [
            f"# {title}",
            "",
            *(lead(run, results, tests, pairs) if lead is not None else []),
            f"Generated by `ufs benchmark-report` from {source or f'`{results_dir}`'}; "
            "do not edit by hand.",
            "",
            *leaderboard_lines(results, tests, pairs, run.tables, view=view, robustness=kept),
            *support_lines(
                results,
                tests,
                run.protocols,
                pairs,
                intro=_view_intro(results),
                robustness=kept,
            ),
            *_resolution_lines(results),
            *sensitivity.sensitivity_markdown(
                run.tables,
                alpha=alpha,
                min_h_values=min_h_values,
                other_grids={absolute_grid.KEY: absolute.tables} if absolute else None,
                computed=views_of,
            ),
            *_pairs_section(results, pairs),
            *_scope_section(run),
            *([f"**How this run was made:** {note}", ""] if note else []),
            *_protocol_section(),
            *_ranks_section(results, img_dir, out_md, plots, run.tables),
            references.references_markdown(
                run.tables, alpha=alpha, name=lambda m: f"`{m}`", tests=tests, **choices
            ),
            *_simulations_section(run),
            *_best_section(run),
            *_scaling_section(run, input_scaling),
            *(
                absolute_grid.absolute_h_markdown(
                    run.tables,
                    absolute.tables,
                    planned=configured_datasets(absolute.config),
                    alpha=alpha,
                    min_h_values=min_h_values,
                    source=f"the archive `{Path(absolute_h).as_posix()}`",
                    full_report=absolute_h_report,
                )
                if absolute
                else []
            ),
            *_scores_section(run),
            *_gap_section(run),
            *_runtime_section(run),
            *_missing_section(run),
            *_failures_section(run),
            *_reading(run, alpha),
        ]
        text = "\n".join(parts).rstrip("\n") + "\n"
        write_text(out_md, text)
        return text


def load_archived_run(archive: str | Path) -> Run:
    """The :class:`Run` of a results archive (restored into a temporary folder and read
    whole: nothing refers to the folder afterwards)."""
    import tempfile

    from .archive_tables import report_inputs_from_archive

    with tempfile.TemporaryDirectory(prefix="ufs-archive-") as tmp:
        report_inputs_from_archive(archive, tmp)
        return load_run(tmp, Path(tmp) / "config.yaml")


def benchmark_report_from_archive(
    archive: str | Path,
    out_md: str | Path,
    *,
    img_dir: str | Path,
    plots: bool = True,
    note: str | None = None,
    include_variants: bool = False,
    min_h_values: int = 3,
    absolute_h: str | Path | None = None,
    absolute_h_report: str = "",
    inputs: str | Path | None = None,
) -> str:
    """The report of a results archive alone (``ufs benchmark-report --archive``): its
    members are restored into a temporary folder (or into the empty folder ``inputs``,
    kept), the per-data-set tables are rebuilt from the evaluations, and the
    report is written with the archive's config, its note (unless ``note`` is given) and
    its input-scaling tables if it holds them. Nothing is fitted or evaluated."""
    import contextlib
    import tempfile

    from .archive_tables import report_inputs_from_archive

    folder = (
        contextlib.nullcontext(str(inputs))
        if inputs is not None
        else tempfile.TemporaryDirectory(prefix="ufs-archive-")
    )
    with folder as tmp:
        manifest = report_inputs_from_archive(archive, tmp)
        scaling = Path(tmp) / "input_scaling"
        note = manifest.get("note", "") if note is None else note
        curated = manifest["curated"]
        if curated:  # a run in progress: say what is reported of which data set
            parts = [f"{d}: {why}" for d, why in sorted(curated.items())]
            note = (note + " " if note else "") + (
                "Archived while the run was in progress; reported as the workflow would "
                "aggregate it: " + "; ".join(parts) + "."
            )
        return benchmark_report(
            tmp,
            Path(tmp) / "config.yaml",
            out_md,
            img_dir=img_dir,
            plots=plots,
            note=note,
            include_variants=include_variants,
            min_h_values=min_h_values,
            input_scaling=scaling if scaling.is_dir() else None,
            source=f"the archive `{Path(archive).as_posix()}`",
            absolute_h=absolute_h,
            absolute_h_report=absolute_h_report,
        )


def scope_of(markdown: str) -> str:
    """The scope line of a report's markdown (without the bold prefix)."""
    for line in markdown.splitlines():
        if line.startswith(SCOPE_PREFIX):
            return line[len(SCOPE_PREFIX) :]
    return ""
