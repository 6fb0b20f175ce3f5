"""The reproduction report, ``docs/reproduction.md``, from the runs' folders.

:func:`reproduction_markdown` assembles it from a folder of reproduction runs (the workflow's
``results/``, or the archives restored by :func:`ufs.report.reproduction.restore_reproductions`):

* the verdicts first, one per seed paper (:mod:`ufs.report.paper_verdicts`; a paper's
  sensitivity claim checked on its sensitivity run);
* then one section per run: its scope (data sets, methods, grid sizes, job time), and its
  comparison with the published cells (:mod:`ufs.report.compare`), or — for a paper that
  publishes figures only — its scores over a two-parameter grid
  (:func:`ufs.report.param_grid.grid_markdown`) or else its label-tuned ACC tables;
* the seed papers' runs that are not there, named.

Sections are delimited by ``<!-- run: NAME -->`` markers (:data:`MARKER`), so that a report
regenerated from the runs at hand can keep (marked) the sections of runs computed elsewhere
(:func:`previous_sections`); a report from the archives keeps none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..pipeline.io import read_evaluations
from .paper_verdicts import (
    CLAIMS,
    SENSITIVITY_CLAIMS,
    Claim,
    sensitivity_markdown,
    sensitivity_verdict,
    verdict_markdown,
    versus_markdown,
    versus_verdict,
)
from .param_grid import grid_markdown, grid_scores

__all__ = ["MARKER", "NoRunsError", "previous_sections", "reproduction_markdown", "verdicts"]


class NoRunsError(ValueError):
    """The folder holds no completed run: a report must not be rewritten from nothing."""


def tuned_grid_sizes(tables: pd.DataFrame) -> str:
    """``"fsasl 9, urafs 27"``: the settings each method's label-tuned cell was chosen
    from (``n_settings`` of the ``oracle`` rows; a range where data sets differ). A
    tuned cell is a maximum over its grid, so a reader needs the grid's size to judge it;
    ``""`` for tables without these columns."""
    if not {"protocol", "n_settings"} <= set(tables.columns):
        return ""
    tuned = tables[tables.protocol == "oracle"].dropna(subset=["n_settings"])
    sizes = tuned.groupby("method").n_settings.agg(["min", "max"]).astype(int)
    return ", ".join(
        f"{m} {lo}" if lo == hi else f"{m} {lo}–{hi}" for m, (lo, hi) in sizes.iterrows()
    )


def run_scope(run: Path, label: str | None = None) -> list[str]:
    """What a results directory holds: datasets, methods, timing (from its tables);
    ``label``: what to call it (default: its path)."""
    lines = []
    if list(run.glob("tables/*.csv")):
        t = _tables(run)
        reps = t.groupby("dataset")["replicates"].max() if "replicates" in t else {}
        names = [
            f"{d} ({int(reps[d])} replicates)" if reps.get(d, 1) > 1 else d
            for d in sorted(t.dataset.unique())
        ]
        lines.append(
            f"Run {label or f'`{run}`'}: datasets {', '.join(names)}; "
            f"methods {', '.join(sorted(t.method.unique()))}."
        )
        grids = tuned_grid_sizes(t)
        if grids:
            lines.append(f"Label-tuned over {grids} parameter settings (the run's grids).")
    timing = run / "timing.json"
    if timing.exists():
        t = json.loads(timing.read_text())
        inside = t["solver_seconds"] + t.get("graph_seconds", 0.0) + t["kmeans_seconds"]
        resumed = (
            " as Snakemake measured each job's last attempt (a job resumed from its fit "
            "checkpoint counts only that attempt, so the fits, timed when they were made, add "
            "up to more)"
            if inside > t["job_wall_seconds"]
            else ""
        )
        lines.append(
            f"{t['jobs']} jobs, {t['job_wall_seconds'] / 60:.1f} min of job time{resumed} "
            f"({t['solver_seconds'] / 60:.1f} min in solvers, {t['kmeans_seconds'] / 60:.1f} "
            "min in k-means)."
        )
    lines += in_progress_sentence(run)
    return [" ".join(lines), ""] if lines else []


def withheld(run: Path) -> dict[str, str]:
    """``"data set/method"`` → ``"in progress (k of m jobs)"`` for the pairs of a run archived
    before it finished (:func:`ufs.report.reproduction.withhold_unfinished`); empty for a
    finished run."""
    path = run / "in_progress.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _pairs(n: int, verb: bool = True) -> str:
    """``"3 method × data set pairs are"`` / ``"1 method × data set pair is"``."""
    noun = "method × data set pair" + ("" if n == 1 else "s")
    return f"{n} {noun}" + ((" is" if n == 1 else " are") if verb else "")


def in_progress_sentence(run: Path) -> list[str]:
    """For a run archived before it finished: which method × data set pairs are withheld,
    with their jobs done (:func:`withheld`)."""
    from .compare import IN_PROGRESS

    pending = withheld(run)
    if not pending:
        return []
    what = "; ".join(f"{k} {v.removeprefix(IN_PROGRESS + ' ')}" for k, v in pending.items())
    return [
        f"**Archived in progress**: {_pairs(len(pending))} withheld until "
        f"all their jobs are done (a label-tuned best over part of a grid is not the "
        f"paper's protocol), and the verdict stands on the rest: {what}."
    ]


def two_parameter_grid(run: Path) -> tuple[str, str, str] | None:
    """``(method, x, y)`` when the run's evaluations tune one method over settings that
    vary exactly two parameters (a sensitivity experiment, e.g. the K-means UFS paper's
    Fig. 3), else ``None``."""
    files = sorted((run / "evaluations").glob("*/*.json"))
    settings: dict[str, set[tuple]] = {}
    for ev in read_evaluations(files):
        settings.setdefault(ev["method"], set()).add(tuple(sorted(ev["params"].items())))
    tuned = {m: s for m, s in settings.items() if len(s) > 1}
    if len(tuned) != 1:
        return None
    ((method, grid),) = tuned.items()
    keys = sorted({k for setting in grid for k, _ in setting})
    return (method, keys[0], keys[1]) if len(keys) == 2 else None


def figures_only_tables(run: Path, archive: str | None) -> list[str]:
    """A run of a paper that reports figures only: the scores over its two-parameter grid
    (:func:`ufs.report.param_grid.grid_markdown`, every grid point: no labels choose)
    with the command that draws the figures; otherwise each data set's label-tuned ACC
    table."""
    grid = two_parameter_grid(run)
    if grid is not None:
        method, x, y = grid
        files = sorted((run / "evaluations").glob("*/*.json"))
        source = f"--archive {archive}" if archive else f"--results {run}"
        lines = [
            f"{method}'s ACC and NMI over its grid of {x} × {y}, every setting (the labels "
            "choose nothing here; status marks as in the tables). The figures: "
            f"`ufs sensitivity-figure {source} --method {method} --x {x} --y {y}`.",
            "",
        ]
        body = grid_markdown(grid_scores(files, method, x, y), x, y, ["acc_mean", "nmi_mean"])
        return lines + [ln.replace("### ", "#### ", 1) for ln in body]
    out = ["Our label-tuned ACC per h:", ""]
    for md in sorted((run / "tables").glob("*.md")):
        blocks = md.read_text().split("\n\n")
        tuned = [b for b in blocks if b.startswith("**ACC %** — label-tuned")]
        if tuned:  # heading, caption, table
            idx = blocks.index(tuned[0])
            out += [blocks[0].strip(), "", tuned[0].strip(), "", blocks[idx + 1].strip(), ""]
    return out


MARKER = "<!-- run: {} -->"


def previous_sections(path: str | Path) -> dict[str, str]:
    """Sections of an existing report, by run name (``<!-- run: NAME -->`` markers; the
    older ``<!-- results/NAME -->`` form is read too). Each runs to the next marker or to
    the closing "Not in this report" line."""
    path = Path(path)
    if not path.exists():
        return {}
    text = path.read_text()
    marks = list(re.finditer(r"^<!-- (?:run: )?(?:\S*/)?([A-Za-z0-9_]+) -->$", text, re.M))
    out = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[m.end() : end]
        body = body.split("\nNot in this report", 1)[0]
        out[m.group(1)] = body.strip("\n")
    return out


def _tables(run: Path) -> pd.DataFrame:
    return pd.concat(
        [pd.read_csv(f, dtype={"h_label": str}) for f in sorted(run.glob("tables/*.csv"))],
        ignore_index=True,
    )


def _restarts(run: Path) -> int:
    """The run's k-means restarts (its evaluations record them)."""
    files = sorted((run / "evaluations").glob("*/*.json"))
    for ev in read_evaluations(files[:1]):
        return int(ev.get("restarts", 20))
    return 20


def verdict_reads(pending: dict[str, str], claim: Claim, versus: bool) -> list[str]:
    """The withheld ``"data set/method"`` pairs (:func:`withheld`) that a verdict reads. A
    claim over a reference (``versus``: figures only) reads the proposed method, its
    declared variants and the reference; a claim checked on published cells reads them
    all (the best competitor of each cell)."""
    if not versus:
        return list(pending)
    return [k for k in pending if k.rsplit("/", 1)[-1] in claim.versus_reads]


def pending_sentence(pending: dict[str, str], claim: Claim, versus: bool) -> str:
    """What a run archived in progress means for its verdict: provisional when a withheld
    pair is one the verdict reads (:func:`verdict_reads`), final otherwise."""
    if not pending:
        return ""
    read = verdict_reads(pending, claim, versus)
    if read:
        return (
            f" *Provisional: the run was archived in progress ({len(read)} method × data "
            "set pairs withheld that this verdict reads, its scope line below).*"
        )
    used = [f"`{m}`" for m in claim.versus_reads]
    used_text = ", ".join(used[:-1]) + f" and {used[-1]}"
    return (
        f" *The run was archived in progress ({_pairs(len(pending), verb=False)} "
        f"withheld, its scope line below), but every pair this verdict reads ({used_text} "
        "on each data set) is complete: the verdict is final.*"
    )


def verdicts(root: Path) -> list[str]:
    """The report's opening: one verdict per seed paper (ufs.report.paper_verdicts), from
    the comparison table of its run under ``root`` where there is one."""
    lines = ["## Verdicts, one per paper", ""]
    cmps = comparisons(root)
    for paper, cmp in cmps.items():
        text = verdict_markdown(cmp, paper)
        run = root / paper
        versus = cmp is None and bool(CLAIMS[paper].versus)
        if versus and list(run.glob("tables/*.csv")):
            text = versus_markdown(
                versus_verdict(_tables(run), CLAIMS[paper], _restarts(run)), paper
            )
        text += pending_sentence(withheld(run), CLAIMS[paper], versus)
        claim = SENSITIVITY_CLAIMS.get(paper)
        files = sorted((root / claim.run / "evaluations").glob("*/*.json")) if claim else []
        if files:
            x, y = list(claim.region)
            scores = grid_scores(files, claim.method, x, y)
            text += sensitivity_markdown(sensitivity_verdict(scores, claim), claim)
        lines += [text, ""]
    return lines + cells_markdown(cmps)


def comparisons(root: Path) -> dict[str, pd.DataFrame | None]:
    """Each seed paper's comparison table (:mod:`ufs.report.compare`) from its run under
    ``root``, or ``None`` where there is no such run."""
    out: dict[str, pd.DataFrame | None] = {}
    for paper in CLAIMS:
        path = root / paper / "comparison" / f"{paper}.csv"
        out[paper] = pd.read_csv(path, dtype={"h": str}) if path.is_file() else None
    return out


def cells_markdown(
    cmps: dict[str, pd.DataFrame | None], published_dir: Path | None = None
) -> list[str]:
    """One row per seed paper: its published cells, how many we computed and how they
    compare (``cmps``: :func:`comparisons`), why the others have no number, and the
    proposed method's own cells; a paper without a run archived says so."""
    from .compare import AGREES, DIFFERS, IMPOSSIBLE, missing_text, no_value
    from .reproduction import PUBLISHED_DIR

    pub_dir = published_dir or PUBLISHED_DIR
    lines = [
        "**Published cells, per paper**",
        "",
        "| paper | published | computed | agree | differ | impossible as published | "
        "without a number (why) | the proposed method's cells: computed, agree, differ |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for paper, claim in CLAIMS.items():
        pub = pub_dir / f"{paper}.csv"
        cmp = cmps.get(paper)
        if not pub.is_file():
            lines.append(f"| {paper} | none (figures only) | — | — | — | — | — | — |")
            continue
        if cmp is None:
            n = len(pd.read_csv(pub))
            lines.append(f"| {paper} | {n} | 0 | — | — | — | {n} (no run archived) | — |")
            continue
        missing = no_value(cmp["status"].astype(str))
        agreement = cmp["agreement"].fillna("")
        why_text = missing_text(cmp)
        own = cmp["method"] == claim.proposed
        lines.append(
            f"| {paper} | {len(cmp)} | {int((~missing).sum())} | "
            f"{int((agreement == AGREES).sum())} | {int((agreement == DIFFERS).sum())} | "
            f"{int((agreement == IMPOSSIBLE).sum())} | {why_text or '—'} | "
            f"{int((own & ~missing).sum())} of {int(own.sum())}: "
            f"{int((own & (agreement == AGREES)).sum())}, "
            f"{int((own & (agreement == DIFFERS)).sum())} |"
        )
    return lines + [""]


def reproduction_markdown(
    root: Path,
    *,
    source: str,
    where: str,
    labels: dict[str, str] | None = None,
    archives: dict[str, str] | None = None,
    previous: Path | None = None,
) -> tuple[str, list[str], list[str]]:
    """The report of the runs under ``root`` (module docstring): ``(text, runs, kept)``.

    ``source`` and ``where`` name the inputs in the header and in the missing-run line;
    ``labels``: run → how its scope line names it (default: its path); ``archives``: run →
    its archive (the figure command of a figures-only run); ``previous``: an existing
    report whose sections of runs not under ``root`` are kept, marked (``kept`` names
    them). :class:`NoRunsError` when ``root`` holds no completed run."""
    labels, archives = labels or {}, archives or {}
    parts = [
        "# Reproduction of the seed papers",
        "",
        f"Generated by `ufs reproduction` from {source}; do not edit by hand.",
        "Ours are the label-tuned (oracle) numbers — the papers' protocol, which uses the labels.",
        "A cell **differs** when |ours − published| exceeds both 1.96 standard errors of the two",
        "means (over the restarts, a mean over h from their covariance across h; replicates for",
        "TP, binomial for CP; `ufs.report.compare`) and the published rounding, half a unit of",
        "the printed last digit; a published value no clustering can score is *impossible as",
        "published*. We did not tune anything to match.",
        "A run may cover a slice of its experiment config (`only_methods`, `only_datasets`,",
        "`offline_only`): the scope line of each run says what it holds; a published cell we",
        "have no value for says why (*data network-only*, *method not implemented*, *not run*).",
        "",
        *verdicts(root),
    ]
    runs = sorted(
        d
        for d in (root.iterdir() if root.is_dir() else [])
        if (d / "tables").is_dir() or (d / "comparison").is_dir()
    )
    sections: dict[str, list[str]] = {}
    for run in runs:
        found = sorted((run / "comparison").glob("*.md"))
        if not found and not (run / "timing.json").exists():
            continue
        body = []
        if not found:
            body += [
                f"## {run.name}",
                "",
                "No published tables to compare with (the paper reports figures only).",
                "",
            ]
        body += run_scope(run, labels.get(run.name))
        for md in found:
            body.append(md.read_text())
        if not found:
            body += figures_only_tables(run, archives.get(run.name))
        sections[run.name] = body
    computed = sorted(sections)
    if not computed:
        raise NoRunsError(f"no completed run with results in {where}")
    kept = []
    if previous is not None:
        keep_note = "*Kept from the previous report: no results of this run under"
        for name, body in previous_sections(previous).items():
            if name in sections:
                continue
            lines = [ln for ln in body.splitlines() if not ln.startswith(keep_note)]
            sections[name] = [f"{keep_note} `{root}` when it was regenerated.*", ""] + lines
            kept.append(name)
    for name in sorted(sections):
        parts.append(MARKER.format(name))
        parts += sections[name]
    # the seed papers' runs (not the benchmark: it reproduces no paper)
    expected = set(CLAIMS) | {c.run for c in SENSITIVITY_CLAIMS.values()}
    missing = sorted(expected - set(sections))
    if missing:
        parts.append(
            f"Not in this report (no completed run in {where}): {', '.join(missing)}; "
            "run `snakemake --configfile config/experiments/<run>.yaml` to add one."
        )
    return "\n".join(parts) + "\n", computed, sorted(kept)
