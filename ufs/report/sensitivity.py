"""How each verdict moves when the rules of the comparison change.

The primary view (:data:`ufs.stats.views.PRIMARY`: one data set per family, simulations
apart, fits over the budget scored as random) is one defensible choice among several. The
sensitivity table recomputes the verdicts — the Friedman test, the ordered pairs of the
all-pairs Wilcoxon–Holm tests, the methods better / worse than random and than all
features, the top average rank — under every view of
:data:`ufs.stats.views.SENSITIVITY_VIEWS`, so a reader sees which verdicts hold whatever
the rule and which rest on one choice. (No Bayesian test and no bootstrap here: the
verdicts are the Holm-corrected Wilcoxon ones.)
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..stats import ranking, references, views
from . import answer, rank_report

__all__ = [
    "friedman_p_text",
    "names_text",
    "primary_verdicts",
    "sensitivity",
    "sensitivity_markdown",
]


def sensitivity(
    tables: pd.DataFrame,
    *,
    protocol: str = "label_free",
    metric: str = "acc",
    alpha: float = 0.05,
    min_h_values: int = 3,
    views_: tuple[views.View, ...] = views.SENSITIVITY_VIEWS,
) -> dict[str, dict[str, object]]:
    """view key → :func:`ufs.report.answer.verdict_summary` of ``protocol``/``metric``
    under that view, plus ``title`` and ``left_out`` (methods the view leaves out)."""
    out = {}
    for v in views_:
        r = ranking.rank_methods(
            tables, protocol, metric, alpha=alpha, min_h_values=min_h_values, view=v
        )
        res = references.reference_tests(
            tables,
            protocol,
            metric,
            alpha=alpha,
            min_h_values=min_h_values,
            bayes=False,
            view=v,
            cells=r.cells.index if not r.cells.empty else None,
        )
        tested = answer.pairwise_results([r], families_of=v, effects=False)[(protocol, metric)]
        row = answer.verdict_summary(r, res, tested)
        row.update(title=v.title, left_out=r.left_out, unit=answer.unit(r))
        out[v.key] = row
    return out


def primary_verdicts(
    tables: pd.DataFrame,
    *,
    protocol: str = "label_free",
    metric: str = "acc",
    alpha: float = 0.05,
    min_h_values: int = 3,
) -> dict[str, object]:
    """The verdicts of :func:`sensitivity` under the primary view alone."""
    return sensitivity(
        tables,
        protocol=protocol,
        metric=metric,
        alpha=alpha,
        min_h_values=min_h_values,
        views_=(views.PRIMARY,),
    )[views.PRIMARY.key]


def friedman_p_text(row: dict[str, object]) -> str:
    """A verdict row's Friedman p as printed (``n/a`` where no rank test applies)."""
    p = row["friedman_p"]
    return "n/a" if p is None else rank_report._fmt_p(p)


def names_text(ms) -> str:
    """Method names as printed in a verdict cell (``none`` for an empty list)."""
    return ", ".join(f"`{m}`" for m in ms) if ms else "none"


def top_text(ms) -> str:
    """The top average rank as printed: the tied methods joined by ``=`` (a tie is shown
    as a tie, never broken by name); ``–`` where nothing is ranked."""
    return " = ".join(f"`{m}`" for m in ms) if ms else "–"


def sensitivity_markdown(
    tables: pd.DataFrame,
    *,
    alpha: float = 0.05,
    min_h_values: int = 3,
    protocols=("label_free",),
    other_grids: Mapping[str, pd.DataFrame] | None = None,
    computed: Mapping[tuple[str, str], dict[str, dict[str, object]]] | None = None,
) -> list[str]:
    """The sensitivity section: per protocol and metric, one row per view (N, Friedman
    p, ordered pairs, verdicts against the references, top method), then the pairs and
    verdicts that hold in every view. ``other_grids``: row key → the tables of a run on
    another h grid (the absolute h view), one more row each under the primary view; such
    a row is other fits on other h, shown beside the views but not counted in "every
    view". ``computed``: (protocol, metric) → :func:`sensitivity`'s result where the
    caller has it (the verdicts' robustness counts read the same views)."""
    lines = [
        "## How the verdicts move with the rules (sensitivity)",
        "",
        "Each row recomputes the verdicts of *What the tests support* under another rule: "
        + "; ".join(f"*{v.key}*: {v.title}" for v in views.SENSITIVITY_VIEWS)
        + "".join(
            f"; *{key}*: the primary view on another h grid (other fits, the section "
            '*The absolute h view*; not counted in "every view" below)'
            for key in other_grids or {}
        )
        + ". Pairs are counted only where the Friedman test rejects; `a > b` pairs and the "
        "reference verdicts are Wilcoxon signed-rank tests with Holm, as in the primary view.",
        "",
    ]
    for protocol in protocols:
        for metric in ranking.METRICS:
            s = (computed or {}).get((protocol, metric)) or sensitivity(
                tables, protocol=protocol, metric=metric, alpha=alpha, min_h_values=min_h_values
            )
            if not s or all(row["n"] == 0 for row in s.values()):
                continue
            lines += [
                f"**{answer.TITLES[protocol]} {metric.upper()}**",
                "",
                "| view | N | Friedman p | ordered pairs | better than random | worse than "
                "random | better than all features | worse than all features | top average "
                "rank | left out |",
                "|---|---:|---:|---:|---|---|---|---|---|---|",
            ]
            extra = {
                key: primary_verdicts(
                    t, protocol=protocol, metric=metric, alpha=alpha, min_h_values=min_h_values
                )
                for key, t in (other_grids or {}).items()
                if not t[t["protocol"] == protocol].empty
            }
            for key, row in {**s, **extra}.items():
                left = ", ".join(f"`{m}`" for m in row["left_out"]) or "–"
                lines.append(
                    f"| {key} | {row['n']} {row['unit']} | "
                    f"{friedman_p_text(row)} | {len(row['pairs'])} | "
                    f"{names_text(row['better_random'])} | {names_text(row['worse_random'])} | "
                    f"{names_text(row['better_all'])} | {names_text(row['worse_all'])} | {top_text(row['top'])} | "
                    f"{left} |"
                )
            lines.append("")
            primary = s[views.PRIMARY.key]
            stable = [
                pair
                for pair in primary["pairs"]
                if all(pair in row["pairs"] for k, row in s.items() if not row["left_out"])
            ]
            fragile = [pair for pair in primary["pairs"] if pair not in stable]
            lines += [
                f"Of the primary view's {len(primary['pairs'])} ordered pairs, "
                f"{len(stable)} hold in every view that keeps all methods"
                + (
                    f"; {len(fragile)} do not: "
                    + ", ".join(f"`{a}` over `{b}`" for a, b in fragile)
                    if fragile
                    else ""
                )
                + ". Better than random in every view: "
                + names_text(
                    [
                        m
                        for m in primary["better_random"]
                        if all(
                            m in row["better_random"]
                            for row in s.values()
                            if m not in row["left_out"]
                        )
                    ]
                )
                + ".",
                "",
            ]
    return lines
