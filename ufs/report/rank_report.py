"""The ranks across data sets for a reader (from :mod:`ufs.stats.ranking`): the
overview and detail tables of ``summary.md`` and ``docs/benchmark.md``, the notes under
them, and the critical-difference (CD) diagram (Demšar, JMLR 7:1-30, 2006). The numbers are
:class:`ufs.stats.ranking.RankResult`'s; this module only shows them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..pipeline.status import STATUS_MARK
from ..stats.ranking import PROTOCOL_TITLES, RankResult, positions, post_hoc, tied
from ..stats.views import BUDGET_RULE
from .cells import Cell, Row, emphasis
from .figures import PNG_DPI, method_group, method_style, save_figure
from .fonts import in_figure_font

__all__ = [
    "TIE_MARK",
    "TIE_LEGEND",
    "rank_text",
    "overview_markdown",
    "details_markdown",
    "rank_notes",
    "statistics_cells",
    "plot_cd",
    "cd_figure",
    "cd_caption",
    "spread_positions",
    "RANK_MARKS_LEGEND",
]


#: after an average rank another method of its comparison shares (equal rank sums)
TIE_MARK = "="

#: what the mark says, for the legends under the rank tables
TIE_LEGEND = (
    f"`{TIE_MARK}` after an average rank: another method has the same (equal rank sums), "
    "a shared place, not an order"
)


def rank_text(r: RankResult, method: str, marks: dict[str, str] = STATUS_MARK) -> str:
    """``method``'s average rank in ``r`` as the tables print it: two decimals, the tie
    mark where another method has the same rank sum (:func:`ufs.stats.ranking.tied`), then
    its status mark (``marks``)."""
    tie = TIE_MARK if bool(tied(r.avg_rank).get(method, False)) else ""
    return f"{r.avg_rank[method]:.2f}{tie}{marks.get(r.method_status(method), '')}"


def tied_text(r: RankResult) -> str:
    """The groups of methods sharing an average rank in ``r``, as ``a = b (5.42)``, best
    first; ``""`` where no rank is shared."""
    shared = r.avg_rank[tied(r.avg_rank)]
    groups: dict[int, list[str]] = {}
    for m, place in positions(r.avg_rank)[shared.index].items():
        groups.setdefault(int(place), []).append(str(m))
    return "; ".join(
        " = ".join(sorted(ms)) + f" ({r.avg_rank[ms[0]]:.2f})" for _, ms in sorted(groups.items())
    )


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def statistics_cells(result: RankResult) -> list[str]:
    """Friedman χ², its p, Iman-Davenport F, its p and the CD of ``result`` as table
    cells (``n/a`` where the test does not apply)."""
    if not result.applicable:
        return ["n/a"] * 5
    return [
        f"{result.statistic:.2f}",
        _fmt_p(result.pvalue),
        f"{result.iman_davenport:.2f}",
        _fmt_p(result.iman_davenport_p),
        f"{result.cd:.2f}",
    ]


def cd_figure_name(protocol: str, metric: str) -> str:
    return f"cd_{protocol}_{metric}.png"


def overview_markdown(results: list[RankResult], figure_dir: str = "figures") -> str:
    """The opening of ``summary.md``: average ranks of every method under each protocol
    and metric, then the Friedman test, CD and diagram of each."""
    alpha = results[0].alpha if results else 0.05

    lines = [
        "## Across data sets: average rank (1 = best)",
        "",
        "A method's score on a data set is its mean over the data set's h of the metric's "
        "mean over k-means restarts (the *mean over h* of the per-data-set tables). Methods "
        "are ranked on each data set (ties averaged) and the ranks averaged over the data "
        f"sets; Friedman test of the ranks, then the Nemenyi critical difference CD at α = "
        f"{alpha:g} only where Friedman rejects. Sorted by the first column (label-free ACC); "
        f"{TIE_LEGEND}.",
        "",
    ]
    cols = [r for r in results if not r.avg_rank.empty]
    methods = sorted({m for r in cols for m in r.avg_rank.index})
    if cols:
        first = cols[0].avg_rank
        methods.sort(key=lambda m: (first.get(m, np.inf), m))
        lines.append(
            "| method | "
            + " | ".join(f"{PROTOCOL_TITLES[r.protocol]} {r.metric.upper()}" for r in cols)
            + " |"
        )
        lines.append("|---" * (len(cols) + 1) + "|")
        rows = []
        for m in methods:
            cells = []
            for r in cols:
                if m in r.avg_rank:
                    cells.append(Cell(rank_text(r, m), float(f"{r.avg_rank[m]:.2f}")))
                else:
                    cells.append(Cell("–"))
            rows.append(Row(m, tuple(cells)))
        for row, kinds in zip(rows, emphasis(rows, higher_is_better=False), strict=True):
            texts = [
                f"**{c.text}**" if k == "best" else f"<u>{c.text}</u>" if k == "second" else c.text
                for c, k in zip(row.cells, kinds, strict=True)
            ]
            lines.append(f"| {row.name} | " + " | ".join(texts) + " |")
        lines.append("")
    lines += [
        "| protocol | metric | methods k | data sets N | Friedman χ² | p | Iman-Davenport F | p "
        f"| CD (α={alpha:g}) | CD diagram |",
        "|---" * 10 + "|",
    ]
    for r in results:
        fig = f"{figure_dir}/{cd_figure_name(r.protocol, r.metric)}"
        cells = statistics_cells(r)
        lines.append(
            f"| {PROTOCOL_TITLES[r.protocol]} | {r.metric.upper()} | {r.k} | {r.n} | "
            + " | ".join(cells)
            + f" | [{fig}]({fig}) |"
        )
    lines.append("")
    for r in results:  # the diagrams' captions (their titles are one line)
        lines.append(
            f"- CD diagram, {PROTOCOL_TITLES[r.protocol]} {r.metric.upper()}: {cd_caption(r)}"
        )
    lines.append("")
    lines += rank_notes(results)
    if lines[-1] != "":
        lines.append("")
    return "\n".join(lines)


#: the marks of the rank table (summary.md's legend)
RANK_MARKS_LEGEND = (
    "† / ‡: at least one fit behind the method's scores did not converge / diverged; ◊: at "
    "least one was degenerate, its answer decided by round-off or a trivial rule; §: some of "
    "the method's fits exceeded the compute budget. " + BUDGET_RULE
)


def _budget_lines(what: str, imputed: dict[str, list[str]], name) -> list[str]:
    return [
        f"- {what}: on {d}, {', '.join(map(name, ms))} exceeded the budget (§) at some h, "
        "scored there as the expected random subset (the missing-data rule)."
        for d, ms in imputed.items()
    ]


def rank_notes(
    results: list[RankResult],
    *,
    titles: dict[str, str] = PROTOCOL_TITLES,
    name=str,
    budget_lines=_budget_lines,
) -> list[str]:
    """Markdown list items of what each comparison left out or imputed: why a test
    does not apply, dropped data sets and methods, methods over the budget (formatted by
    ``budget_lines(what, ranked_last, name)``). ``name`` formats a method name."""
    lines = []
    first = next(iter(results), None)
    if first is not None and first.excluded:
        by_role: dict[str, list[str]] = {}
        for m, role in first.excluded.items():
            by_role.setdefault(role, []).append(name(m))
        lines.append(
            "- Not ranked (not competitors): "
            + "; ".join(f"{role}s {', '.join(ms)}" for role, ms in sorted(by_role.items()))
            + ". References are compared with each method by paired tests instead; "
            "variants enter the ranks only when asked for (`include_variants`)."
        )
    if first is not None and first.thin_datasets:
        lines.append(
            "- Flagged and not ranked: "
            + ", ".join(
                f"{d} ({c} value{'s' if c != 1 else ''} of h)"
                for d, c in first.thin_datasets.items()
            )
            + " — fewer than 3 values of h make a data set's rank a lottery."
        )
    for r in results:
        what = f"{titles[r.protocol]} {r.metric.upper()}"
        if r.note:
            lines.append(f"- {what}: {r.note}.")
        for d, ms in r.dropped_datasets.items():
            lines.append(
                f"- {what}: data set {d} dropped (no h where {', '.join(map(name, ms))} "
                "and the other methods all have a result)."
            )
        for m, ds in r.dropped_methods.items():
            lines.append(f"- {what}: method {name(m)} dropped (no score on {', '.join(ds)}).")
        for d, ms in r.partial_support.items():
            lines.append(
                f"- {what}: on {d}, the h where {', '.join(map(name, ms))} "
                f"{'has' if len(ms) == 1 else 'have'} no result are left out for every method."
            )
        if r.imputed:
            lines += budget_lines(what, r.imputed, name)
    return lines


def details_markdown(results: list[RankResult]) -> str:
    """Per protocol and metric: each method's score (%) and rank on every data set."""
    lines = ["## Scores and ranks per data set", ""]
    for r in results:
        if r.avg_rank.empty:
            continue
        lines += [
            f"**{r.metric.upper()}, {PROTOCOL_TITLES[r.protocol]}**: score % (rank on the data "
            "set); mean over h of the mean over restarts",
            "",
            "| method | average rank | " + " | ".join(r.scores.index) + " |",
            "|---" * (r.n + 2) + "|",
        ]
        for m in r.avg_rank.index:
            cells = [
                (
                    "budget exceeded"
                    if np.isnan(r.scores.loc[d, m])
                    else f"{100 * r.scores.loc[d, m]:.1f}"
                )
                + f"{STATUS_MARK.get(r.status.loc[d, m], '')} ({r.ranks.loc[d, m]:g})"
                for d in r.scores.index
            ]
            lines.append(f"| {m} | {r.avg_rank[m]:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def spread_positions(x, gap: float) -> np.ndarray:
    """Positions for the leader lines of the ascending values ``x``: each as close to its
    value as possible with neighbours at least ``gap`` apart; tied or close values are
    spread symmetrically about their mean (adjacent blocks pooled until none overlap)."""
    x = np.asarray(x, dtype=float)
    blocks: list[list[float]] = []  # [first index, count, sum of the values]
    for i, xi in enumerate(x):
        blocks.append([i, 1, xi])
        while len(blocks) > 1:
            (i0, n0, s0), (_, n1, s1) = blocks[-2], blocks[-1]
            end0 = s0 / n0 + gap * (n0 - 1) / 2
            start1 = s1 / n1 - gap * (n1 - 1) / 2
            if start1 - end0 >= gap * (1 - 1e-9):
                break
            blocks[-2:] = [[i0, n0 + n1, s0 + s1]]
    out = np.empty(x.size)
    for first, n, total in blocks:
        first, n = int(first), int(n)
        out[first : first + n] = total / n + gap * (np.arange(n) - (n - 1) / 2)
    return out


_CD_WHAT = {
    "not_converged": "some fits did not converge",
    "diverged": "some fits diverged",
    "budget_exceeded": "fits over the compute budget: scored as random at those h",
    "degenerate": "some fits degenerate (round-off or a trivial rule decided them)",
}


def cd_caption(r: RankResult) -> str:
    """The CD diagram's caption, written beside the figure in the markdown (it
    was a four-line title): the test, whether a post-hoc comparison was made, the status
    marks, who is not ranked, the methods that share an average rank (drawn at one point,
    their labels marked ``=``), and what the bold names are."""
    parts = [p.rstrip(".") for p in _cd_subtitle(r).split("\n")]
    ties = tied_text(r)
    if ties:
        parts.append(f"Tied average ranks ({TIE_MARK}): {ties}")
    return ". ".join([*parts, "Bold names: the seed papers' methods."])


def _cd_subtitle(r: RankResult) -> str:
    """The test, whether a post-hoc comparison was made, the status marks and who is not
    ranked."""
    if not r.applicable:
        sub = r.note
    elif post_hoc(r):
        sub = (
            f"Friedman χ² = {r.statistic:.1f}, p = {_fmt_p(r.pvalue)} (significant at "
            f"α = {r.alpha:g}); bars: Nemenyi CD, a picture of mean ranks (the paired tests "
            "decide pairs)"
        )
    else:
        sub = (
            f"Friedman χ² = {r.statistic:.1f}, p = {_fmt_p(r.pvalue)}: NOT significant at "
            f"α = {r.alpha:g}, so no post-hoc test (no Nemenyi bars, no CD)"
        )
    marks = sorted({r.method_status(m) for m in r.avg_rank.index} & set(STATUS_MARK))
    if marks:
        sub += "\n" + "; ".join(f"{STATUS_MARK[s]} {_CD_WHAT[s]}" for s in marks)
    by_role: dict[str, list[str]] = {}
    for m, role in r.excluded.items():
        by_role.setdefault(role, []).append(m)
    if by_role:
        sub += "\nnot ranked (not competitors): " + "; ".join(
            f"{role}s {', '.join(ms)}" for role, ms in sorted(by_role.items())
        )
    return sub


@in_figure_font
def cd_figure(result: RankResult):
    """The critical-difference diagram: methods at their average rank on a 1..k axis (best
    on the left), each with its marker and colour (:func:`ufs.report.figures.method_style`),
    seed methods in bold; leader lines spread apart where ranks tie; thick bars joining
    methods not significantly different (Nemenyi) and the CD as a scale bar — only when
    the Friedman test is significant. Without a test (too few methods or data sets) the
    ranks are drawn without bars and the reason is printed on the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = result
    unit = (
        ("family" if r.n == 1 else "families")
        if r.families
        else ("data set" if r.n == 1 else "data sets")
    )
    title = f"{PROTOCOL_TITLES[r.protocol]}, {r.metric.upper()}: average rank over {r.n} {unit}"
    if r.avg_rank.empty:
        fig, ax = plt.subplots(figsize=(7, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.5, r.note or "nothing to rank", ha="center", va="center", wrap=True)
        ax.set_title(title, fontsize=10)
        return fig
    k, lo, hi = r.k, 1, max(r.k, 2)
    groups = r.groups if post_hoc(r) else []
    # layout in "row" units: axis at y = 0, groups below it, then one label row per method
    group_y = [-0.55 - 0.3 * j for j in range(len(groups))]
    top_label = (group_y[-1] if group_y else -0.3) - 0.7
    nrows = max((k + 1) // 2, k - (k + 1) // 2)
    bottom = top_label - (nrows - 1) - 0.6
    top = 1.6 if groups else 1.0
    heading = f"{title}; bold: seed methods"  # one line: the caption goes beside it
    above = 0.25  # inches above the axes for the heading
    height = 0.27 * (top - bottom) + 0.35 + above
    fig = plt.figure(figsize=(9.5, height))
    ax = fig.add_axes((0.27, 0.02, 0.46, 0.98 - above / height))
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)
    ax.axis("off")
    _cd_axis(ax, lo, hi)
    if groups:
        _cd_scale(ax, r.cd, lo, hi)
    _cd_methods(ax, r, top_label, lo, hi, gap=0.09 * (hi - lo) / (9.5 * 0.46))
    for j, grp in enumerate(groups):  # groups not significantly different
        a, b = r.avg_rank[grp[0]], r.avg_rank[grp[-1]]
        ax.plot([a - 0.05, b + 0.05], [group_y[j]] * 2, color="0.15", lw=3, solid_capstyle="butt")
    fig.suptitle(heading, fontsize=9, y=0.995, va="top")
    return fig


def _cd_axis(ax, lo: int, hi: int) -> None:
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for t in range(lo, hi + 1):
        ax.plot([t, t], [0, 0.15], color="black", lw=1)
        ax.text(t, 0.25, str(t), ha="center", va="bottom", fontsize=8)


def _cd_scale(ax, cd: float, lo: int, hi: int) -> None:
    x1 = min(lo + cd, hi)
    ax.plot([lo, x1], [1.15, 1.15], color="black", lw=1.5)
    for x in (lo, x1):
        ax.plot([x, x], [1.05, 1.25], color="black", lw=1.5)
    label = f"CD = {cd:.2f}" + (" (beyond the axis)" if lo + cd > hi else "")
    ax.text((lo + x1) / 2, 1.3, label, ha="center", va="bottom", fontsize=8)


def _cd_methods(ax, r: RankResult, top_label: float, lo: int, hi: int, gap: float) -> None:
    """Each method: its marker at its rank, a leader line in its colour and line style (bent
    to its spread position, so tied ranks keep separate lines) down to its label row; best
    half to the left."""

    names, vals = list(r.avg_rank.index), r.avg_rank.to_numpy(dtype=float)
    shared = tied(r.avg_rank)
    xs = spread_positions(vals, gap)
    half = (r.k + 1) // 2
    rows = {i: i for i in range(half)} | {i: r.k - 1 - i for i in range(half, r.k)}
    for i, name in enumerate(names):
        left = i < half
        y, x_end = top_label - rows[i], lo if left else hi
        st = method_style(name)
        ax.plot(
            [vals[i], xs[i], xs[i], x_end],
            [0, -0.3, y, y],
            color=st["color"],
            ls=st["ls"],
            lw=0.9,
            clip_on=False,
        )
        ax.plot(
            vals[i], 0, ls="", marker=st["marker"], color=st["color"], ms=4, zorder=3, clip_on=False
        )
        mark = STATUS_MARK.get(r.method_status(name), "")
        dx = (-0.15 if left else 0.15) * (hi - lo) / 10
        ax.text(
            x_end + dx,
            y,
            f"{name}{mark} ({vals[i]:.2f}{TIE_MARK if shared[name] else ''})",
            ha="right" if left else "left",
            va="center",
            fontsize=8,
            fontweight="bold" if method_group(name) == "seed" else "normal",
        )


def plot_cd(
    result: RankResult, path: str | Path, *, dpi: int = PNG_DPI, vector: bool = False
) -> Path:
    """Write the CD diagram (:func:`cd_figure`) as a PNG at ``dpi`` and, with ``vector``,
    its PDF twin (:func:`ufs.report.figures.save_figure`); returns the PNG path."""

    fig = cd_figure(result)
    return save_figure(fig, path, dpi, vector=vector, bbox_inches="tight", pad_inches=0.15)
