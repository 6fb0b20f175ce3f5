"""Where a new method stands against an archived benchmark (``ufs compare``).

A researcher's own selector (registered by entry point or by a config's import path,
:mod:`ufs.plugins`) is fitted and evaluated on every data set of the benchmark archive
under the archive's protocol, budget and seeds; every other method's evaluations are
restored from the archive, not re-fitted. The report is ``docs/benchmark.md``'s own
(:func:`ufs.report.benchmark_report.benchmark_report`: the same primary view, the same
tests), opened by :func:`standing_markdown`: the method's average rank and place, its
all-pairs Wilcoxon tests (Holm over every pair of the comparison, as the benchmark's)
against each competitor with the effect and its interval, its tests against the expected
random subset and all features, its flagged fits, and the CPU time the comparison took
beside what re-running the whole benchmark costs.

:func:`compare_method` runs it: restore → one sliced Snakemake run (``only_methods``) →
report. The slice's job list is recorded, so a reader can check that nothing else was
fitted.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..fileio import read_json, write_text
from ..stats import ranking
from . import rank_report
from .answer import resolution_sentence

__all__ = [
    "compare_method",
    "placement_plan",
    "PlacementPlan",
    "cpu_seconds",
    "cpu_text",
    "standing_markdown",
    "job_counts",
]

_TITLES = {
    "label_free": "label-free",
    "label_free_tuned": "label-free tuned",
    "oracle": "label-tuned",
}


def cpu_seconds(results_dir: str | Path, method: str | None = None) -> dict[str, float]:
    """CPU seconds of the fits and of their k-means evaluation in ``results_dir``'s
    evaluation files (``method``: its files only; ``None``: all)."""
    fit = kmeans = 0.0
    pattern = f"{method}.c*.json" if method else "*.json"
    for path in Path(results_dir, "evaluations").glob(f"*/{pattern}"):
        for ev in read_json(path).get("evaluations", []):
            if method is not None and ev.get("method") != method:
                continue
            fit += float(ev.get("fit_cpu_seconds_total", ev.get("fit_seconds_total", 0.0)))
            kmeans += float(ev.get("kmeans_cpu_seconds", ev.get("kmeans_seconds", 0.0)))
    return {"fit": fit, "kmeans": kmeans, "total": fit + kmeans}


def cpu_text(seconds: float) -> str:
    """CPU time in CPU-h, or CPU-s below six minutes."""
    return f"{seconds / 3600:.2f} CPU-h" if seconds >= 360 else f"{seconds:.0f} CPU-s"


def _pp(x: float) -> str:
    return f"{100 * x + 0.0:+.1f}"  # + 0.0: no "-0.0"


def _pair_rows(name: str, pairs: pd.DataFrame) -> list[dict[str, Any]]:
    """The pairs involving ``name``, seen from it (its wins, its median difference)."""
    rows = []
    if pairs.empty:
        return rows
    for _, r in pairs[(pairs["a"] == name) | (pairs["b"] == name)].iterrows():
        mine = r["a"] == name
        sign = 1 if mine else -1
        lo, hi = (
            (r.get("ci_low"), r.get("ci_high")) if mine else (-r.get("ci_high"), -r.get("ci_low"))
        )
        verdict = "no difference shown"
        if r["ordered"]:
            verdict = "better" if mine else "worse"
        rows.append(
            {
                "other": r["b"] if mine else r["a"],
                "wtl": (r["wins"], r["ties"], r["losses"])
                if mine
                else (r["losses"], r["ties"], r["wins"]),
                "median": sign * r["median_diff"],
                "ci": (lo, hi),
                "p_holm": r["p_holm"],
                "verdict": verdict,
            }
        )
    return sorted(rows, key=lambda x: ({"better": 0, "worse": 1}.get(x["verdict"], 2), x["p_holm"]))


def same_scores(name: str, scores: pd.DataFrame) -> list[str]:
    """The other methods whose scores equal ``name``'s on every compared data set (rows of
    a :class:`~ufs.stats.ranking.RankResult`'s ``scores``; equal to round-off, 1e-12):
    as far as these data show, the same method under another name."""
    if name not in scores or scores.empty:
        return []
    mine = scores[name].to_numpy(float)
    return [
        m
        for m in scores.columns
        if m != name
        and np.allclose(scores[m].to_numpy(float), mine, rtol=0, atol=1e-12, equal_nan=True)
    ]


def rank_context(name: str, r: ranking.RankResult) -> str:
    """What adding ``name`` changes in the comparison: one more competitor (k) moves every
    average rank, the Nemenyi CD and the Holm corrections, and a method with the same
    scores as ``name`` shares its ranks (a tie splits two places)."""
    text = (
        f"Ranked among k = {r.k} competitors, one more than the archived benchmark: every "
        f"average rank, the Nemenyi CD and the Holm corrections here are computed with "
        f"`{name}` in, so the other methods' numbers are not those of the archived report."
    )
    twins = same_scores(name, r.scores)
    if twins:
        names = ", ".join(f"`{m}`" for m in twins)
        text += (
            f" **`{name}` has the same scores as {names} on all {r.n} compared "
            f"{'families' if r.families else 'data sets'}**: as far as these data show it "
            "is the same method; tied, each takes the mean of their places, which moves "
            f"{names}'s average rank by up to 0.5 against the archived report."
        )
    return text


def place_text(name: str, r: ranking.RankResult) -> str:
    """``"place 3 of 19"``, or where methods share ``name``'s average rank (equal rank
    sums) ``"place 3= of 19, tied with `a`"``: a shared place, never one the names decide
    (:func:`ufs.stats.ranking.positions`)."""
    place = ranking.positions(r.avg_rank)
    others = [f"`{m}`" for m in place.index[place == place[name]] if m != name]
    if not others:
        return f"place {place[name]} of {r.k}"
    return f"place {place[name]}= of {r.k}, tied with {', '.join(sorted(others))}"


def standing_markdown(
    name: str,
    results: list[ranking.RankResult],
    pairs: dict[tuple[str, str], pd.DataFrame],
    tests: dict[tuple[str, str], pd.DataFrame],
    *,
    flags: dict[str, int] | None = None,
    cpu: dict[str, float] | None = None,
    full_cpu: dict[str, float] | None = None,
) -> list[str]:
    """The report's first section: where ``name`` stands, per protocol and metric of the
    primary view (``results``, ``pairs``: :func:`ufs.report.answer.pairwise_results`,
    ``tests``: :func:`ufs.stats.references.all_reference_tests`)."""
    lines = [f"## Where `{name}` stands", ""]
    if cpu is not None and full_cpu is not None:
        share = cpu["total"] / full_cpu["total"] if full_cpu["total"] else float("nan")
        lines += [
            f"**Cost.** Fitting and evaluating `{name}` took {cpu['fit']:.0f} CPU-s of fits and "
            f"{cpu['kmeans']:.0f} CPU-s of k-means ({cpu_text(cpu['total'])}); re-running "
            f"the whole benchmark costs {cpu_text(full_cpu['total'])} of fits and k-means "
            f"(this method: {100 * share:.1f} % of that). Every other method's evaluations "
            "were restored from the archive, not re-fitted.",
            "",
        ]
    if flags:
        shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(flags.items()) if v)
        lines += [f"**Flagged cells** of `{name}` (fit status): {shown or 'none'}.", ""]
    for r in results:
        if r.avg_rank.empty or name not in r.avg_rank.index:
            if not r.avg_rank.empty:
                why = r.dropped_methods.get(name) or r.excluded.get(name)
                lines += [
                    f"**{_TITLES[r.protocol]} {r.metric.upper()}**: `{name}` is not ranked"
                    + (f" ({why})" if why else "")
                    + ".",
                    "",
                ]
            continue
        unit = "families" if r.families else "data sets"
        lines += [
            f"**{_TITLES[r.protocol]} {r.metric.upper()}** (N = {r.n} {unit}, k = {r.k}): "
            f"average rank {r.avg_rank[name]:.2f}, {place_text(name, r)} (Friedman p = "
            f"{rank_report._fmt_p(r.pvalue)}). {resolution_sentence(r.k, r.n, r.alpha, unit)}",
            "",
            rank_context(name, r),
            "",
        ]
        rows = _pair_rows(name, pairs.get((r.protocol, r.metric), pd.DataFrame()))
        better = [x["other"] for x in rows if x["verdict"] == "better"]
        worse = [x["other"] for x in rows if x["verdict"] == "worse"]
        lines += [
            f"All-pairs Wilcoxon tests, Holm over all {r.k * (r.k - 1) // 2} pairs: better than "
            f"{len(better)} ({', '.join(f'`{m}`' for m in better) or 'none'}), worse than "
            f"{len(worse)} ({', '.join(f'`{m}`' for m in worse) or 'none'}), no difference "
            f"shown against {len(rows) - len(better) - len(worse)}.",
            "",
            "| against | wins/ties/losses | median difference (pp) [95 % CI] | Holm p | verdict |",
            "|---|---|---|---:|---|",
        ]
        for x in rows:
            w, t, lo = x["wtl"]
            ci = x["ci"]
            ci_text = f" [{_pp(ci[0])}, {_pp(ci[1])}]" if pd.notna(ci[0]) else ""
            lines.append(
                f"| `{x['other']}` | {w}/{t}/{lo} | {_pp(x['median'])}{ci_text} | "
                f"{rank_report._fmt_p(x['p_holm'])} | {x['verdict']} |"
            )
        ref = tests.get((r.protocol, r.metric), pd.DataFrame())
        if name in ref.index:
            row = ref.loc[name]
            parts = []
            for prefix, what in (("rand_", "the expected random subset"), ("all_", "all features")):
                if f"{prefix}direction" in row and pd.notna(row.get(f"{prefix}p_holm")):
                    parts.append(
                        f"against {what}: {row[f'{prefix}direction']} (median "
                        f"{_pp(row[f'{prefix}median_diff'])} pp, Holm p "
                        f"{rank_report._fmt_p(row[f'{prefix}p_holm'])})"
                    )
            if parts:
                lines += ["", "References — " + "; ".join(parts) + "."]
        lines.append("")
    return lines


_JOB = re.compile(
    r"^(?:Job \d+: )?(fit|evaluate(?: \(k-means, \d+ restarts\))?) (\S+?)(?:,| on) ", re.M
)


def job_counts(log: str) -> dict[str, dict[str, int]]:
    """``{"fit": {method: jobs}, "evaluate": {...}}`` from a Snakemake run's messages
    (``fit <methods> on <data set> ...``, ``evaluate (k-means, R restarts) <methods> on``)."""
    out: dict[str, dict[str, int]] = {"fit": {}, "evaluate": {}}
    for step, method in _JOB.findall(log):
        key = "fit" if step == "fit" else "evaluate"
        out[key][method] = out[key].get(method, 0) + 1
    return out


@dataclass
class PlacementPlan:
    """Where ``ufs compare`` can place a method here (:func:`placement_plan`): the
    archive's data sets it runs on (``placed``) and those it cannot (``missing``: data set
    → its state, ``manual``, ``downloadable`` or ``OpenML``, and what fetching means), the
    config of the run, and the one-line cost of the run (:mod:`ufs.pipeline.run_cost`)."""

    config: dict[str, Any]
    archived: list[str]
    placed: list[str]
    missing: dict[str, str]
    mirror: str | None
    cache: str
    cost: str = ""
    sizes: dict[str, int] = field(default_factory=dict)  # bytes of a missing download

    def missing_sentence(self) -> str:
        """What this machine lacks and what fetching it costs ("" when nothing)."""
        if not self.missing:
            return ""
        sizes = [b for d, b in self.sizes.items() if d in self.missing]
        fetchable = [d for d, v in self.missing.items() if not v.startswith("manual")]
        return (
            "not here: "
            + "; ".join(
                f"{d} ({v}" + (f", {self.sizes[d] / 1e6:.1f} MB)" if d in self.sizes else ")")
                for d, v in sorted(self.missing.items())
            )
            + (
                f". --fetch downloads {len(fetchable)} of them"
                + (f" (at least {sum(sizes) / 1e6:.1f} MB)" if sizes else "")
                + " into the data cache "
                + self.cache
                if fetchable
                else ""
            )
        )

    def scope_sentence(self) -> str:
        """The report's first line: which data sets the method is placed on."""
        if not self.missing:
            return (
                f"Placed on all {len(self.archived)} data sets of the archive: "
                f"{', '.join(self.placed)}."
            )
        return (
            f"Placed on {len(self.placed)} of the archive's {len(self.archived)} data sets "
            f"({', '.join(self.placed)}); not on {', '.join(sorted(self.missing))}, which "
            "this machine does not have (`ufs compare --fetch` downloads the downloadable "
            "ones first). Every method is compared on the placed data sets only."
        )


def placement_plan(
    name: str,
    config: dict[str, Any],
    results_dir: str | Path,
    *,
    archive_methods: dict[str, Any],
    mirror: str | None = None,
    fetch: bool = False,
) -> PlacementPlan:
    """The data sets of the archived benchmark (those with an evaluation in
    ``results_dir``) that this machine has — bundled, generated, in the mirror, in the
    cache, or (``fetch``) downloadable — and the config that runs ``name`` on them alone:
    ``oracle_datasets`` keeps those placed, the mirror is this machine's (``mirror``, else
    ``UFS_MIRROR``, else the archive's own folder when it exists here)."""
    from ..datasets.availability import data_state, download_size
    from ..datasets.locations import data_cache, data_mirror
    from ..pipeline.run_cost import cost_line, run_cost

    results_dir = Path(results_dir)
    own = str(config.get("mirror_dir") or "")
    mirror = mirror or data_mirror({}) or (own if own and Path(own).is_dir() else None)
    cache = data_cache(config)
    full = {**config, "offline_only": False, "mirror_dir": mirror or ""}
    archived = _archived_datasets({**full, "methods": archive_methods}, results_dir)
    placed, missing, to_fetch, sizes = [], {}, [], {}
    for d in archived:
        if "file" in (archived[d] or {}):
            placed.append(d)
            continue
        state = data_state(d, mirror=mirror, cache=cache)
        if state.available or (fetch and state.state in ("downloadable", "OpenML")):
            placed.append(d)
            if not state.available:
                to_fetch.append(d)
            continue
        missing[d] = state.state
        if download_size(d):
            sizes[d] = download_size(d)
    if not placed:
        raise FileNotFoundError(
            f"none of the archive's data sets is on this machine ({', '.join(sorted(missing))}): "
            "give a mirror (--mirror-dir or UFS_MIRROR), or download them with --fetch"
        )
    run = {**full, "datasets": {d: archived[d] for d in placed}}
    # the archive holds no other method's stability to place this one's against
    run["stability"] = {**(run.get("stability") or {}), "enabled": False}
    if run.get("oracle_datasets") is not None:
        run["oracle_datasets"] = [d for d in run["oracle_datasets"] if d in placed]
    out = PlacementPlan(run, list(archived), placed, missing, mirror, cache, sizes=sizes)
    try:
        from ..pipeline.config import build_plan

        plan = build_plan(
            {
                **run,
                # the method's own entry: a class given by import path is registered here too
                "methods": {**archive_methods, name: (config.get("methods") or {}).get(name, {})},
                "only_methods": [name],
            },
            warn=False,
        )
        out.cost = cost_line(run_cost(plan, run, results_dir, fetch=to_fetch))
    except Exception as exc:  # a method known only to the workflow's processes
        out.cost = f"run cost: not estimated here ({type(exc).__name__}: {exc})"
    return out


def compare_method(
    name: str,
    archive: str | Path,
    results_dir: str | Path,
    out_md: str | Path,
    *,
    overlay: dict[str, Any] | None = None,
    cores: int = 2,
    img_dir: str | Path | None = None,
    snakefile: str | Path | None = None,
    extra: list[str] = (),
    mirror: str | None = None,
    fetch: bool = False,
    say=None,
) -> dict[str, Any]:
    """Place method ``name`` in the benchmark of ``archive`` (module docstring): restore
    the archive into ``results_dir`` (unless it holds evaluations already), run the
    workflow on the archive's config with ``overlay`` merged (it may define
    ``methods.<name>``; default ``{name: {}}``) sliced to ``name`` on the archive's data
    sets this machine has (:func:`placement_plan`; ``fetch``: downloading what can be),
    and write the report ``out_md``, whose first line names the data sets. ``say``: called
    with the plan's lines before the run starts. Returns ``{"jobs", "cpu", "full_cpu",
    "report", "placement"}``."""
    import yaml

    from ..pipeline.archive import read_archive, restore_archive
    from ..pipeline.config import merge_configs
    from ..pipeline.scheduling import workflow_command

    results_dir = Path(results_dir).resolve()
    manifest, _ = read_archive(archive)
    base = yaml.safe_load(manifest["config"]["text"]) or {}
    overlay = dict(overlay or {})
    methods = dict(overlay.pop("methods", None) or {})
    methods.setdefault(name, {})
    config = merge_configs(base, {**overlay, "methods": methods})
    config["output_dir"] = str(results_dir)
    enabled = bool(overlay.get("mlflow", {}).get("enabled"))
    config["mlflow"] = {**(config.get("mlflow") or {}), "enabled": enabled}
    if not any(results_dir.glob("evaluations/*/*.json")):
        restore_archive(archive, results_dir)
    # the archive's data sets only (a data set the config gained since would place the
    # method against nobody), and of those the ones this machine has. Planned with the
    # archive's own methods: the new one may be known only to the workflow's processes
    # (an import path, or a plugin on their PYTHONPATH)
    placement = placement_plan(
        name, config, results_dir, archive_methods=base["methods"], mirror=mirror, fetch=fetch
    )
    if say is not None:
        for line in (placement.scope_sentence(), placement.missing_sentence(), placement.cost):
            if line:
                say(line)
    config = placement.config
    full_cpu = cpu_seconds(results_dir)
    report_cfg = results_dir.parent / f"{results_dir.name}.config.yaml"
    run_cfg = results_dir.parent / f"{results_dir.name}.run.yaml"
    write_text(report_cfg, yaml.safe_dump({**config, "only_methods": []}, sort_keys=False))
    write_text(run_cfg, yaml.safe_dump({**config, "only_methods": [name]}, sort_keys=False))
    snakefile = Path(snakefile) if snakefile else Path(__file__).resolve().parents[2] / "Snakefile"
    cmd = workflow_command(snakefile, run_cfg, cores, "--rerun-incomplete", *extra)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    write_text(results_dir / "logs" / f"compare_{name}.log", log)
    if proc.returncode != 0:
        raise RuntimeError(f"the workflow failed ({proc.returncode}); its log:\n{log[-4000:]}")
    jobs = job_counts(log)
    cpu = cpu_seconds(results_dir, name)
    report = _report(
        name, results_dir, report_cfg, Path(out_md), img_dir, cpu, full_cpu, jobs, placement
    )
    return {
        "jobs": jobs,
        "cpu": cpu,
        "full_cpu": full_cpu,
        "report": report,
        "placement": placement,
    }


def _archived_datasets(config: dict[str, Any], results_dir: Path) -> dict[str, Any]:
    """The config's data sets with at least one evaluation in ``results_dir``."""
    from ..pipeline.config import build_plan

    plan = build_plan({**config, "only_methods": [], "only_datasets": []}, warn=False)
    present = {p.name for p in (results_dir / "evaluations").iterdir() if p.is_dir()}
    bases = {i.base for d, i in plan.instances.items() if d in present}
    return {k: v for k, v in config["datasets"].items() if k in bases}


def _report(
    name, results_dir, config_path, out_md, img_dir, cpu, full_cpu, jobs, placement=None
) -> str:
    """The benchmark report with the method added, opened by :func:`standing_markdown` on
    the report's own statistics (computed once)."""
    from .benchmark_report import benchmark_report

    def lead(run, results, tests, pairs) -> list[str]:
        mine = run.tables[run.tables["method"] == name]
        flags = mine["status"].value_counts().to_dict() if "status" in mine else {}
        flags.pop("ok", None)
        fitted = ", ".join(f"{m}: {n}" for m, n in sorted(jobs["fit"].items())) or "none"
        scope = [placement.scope_sentence(), ""] if placement is not None else []
        return [
            *scope,
            "Generated by `ufs compare`; the statistics are those of `docs/benchmark.md` (the "
            "same primary view and tests), with this method added. Fit jobs of this run, per "
            f"method: {fitted}.",
            "",
            *standing_markdown(
                name, results, pairs, tests, flags=flags, cpu=cpu, full_cpu=full_cpu
            ),
            "The full benchmark report with the method added follows.",
            "",
        ]

    img_dir = Path(img_dir) if img_dir else out_md.parent / f"{out_md.stem}_img"
    out = benchmark_report(
        results_dir,
        config_path,
        out_md,
        img_dir=img_dir,
        title=f"`{name}` against the benchmark",
        lead=lead,
    )
    write_text(
        results_dir / "logs" / f"compare_{name}.json",
        json.dumps({"jobs": jobs, "cpu": cpu, "full_cpu": full_cpu}, indent=1),
    )
    return out
