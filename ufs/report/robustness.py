"""How firmly each headline verdict stands: every "better / worse than the expected random
subset" and "better / worse than all features" verdict of a report (the paired Wilcoxon test
with Holm, :func:`ufs.stats.references.reference_tests`), counted two ways.

* **Leave one family out**: the same test recomputed with each of the comparison's N
  families (or data sets, where none has two members) left out in turn, the other families'
  scores as they are (the same cells, the same Holm correction over the same methods): in how
  many of the N runs the verdict (its direction) is the same.
* **Sensitivity views**: the same verdict under each other view of the sensitivity table
  (:data:`ufs.stats.views.SENSITIVITY_VIEWS` but the primary; :mod:`.sensitivity`) that keeps
  the method; the absolute h grid (other fits) is not counted, as in the table's "every view".

A verdict kept in fewer than all is **fragile**, and said so with its counts wherever it is
shown (:meth:`Kept.text`): the leaderboard's Δ cells, the verdict lines of *What the tests
support* and each protocol's paragraph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from ..stats import paired, ranking, references, views

__all__ = ["Kept", "PREFIXES", "lofo_kept", "views_kept", "verdict_robustness", "annotate"]

#: the references a verdict is against: the random reference, all features
PREFIXES = ("rand_", "all_")
#: the verdicts that count (the others are "no difference shown")
VERDICTS = ("better", "worse")


@dataclass(frozen=True)
class Kept:
    """In how many leave-one-family-out runs (``lofo`` of ``lofo_runs``) and views (``views``
    of ``views_runs``; None where the views were not computed) a verdict holds."""

    lofo: int
    lofo_runs: int
    views: int | None = None
    views_runs: int | None = None

    @property
    def fragile(self) -> bool:
        return self.lofo < self.lofo_runs or (
            self.views is not None and self.views_runs is not None and self.views < self.views_runs
        )

    def _has_views(self) -> bool:
        return self.views is not None and bool(self.views_runs)

    def text(self) -> str:
        """``fragile: 10 of 24 leave-one-family-out runs, 5 of 6 views`` for a fragile
        verdict; ``24/24 · 6/6`` (leave-one-family-out runs · views) for one kept in all."""
        if self.fragile:
            out = f"fragile: {self.lofo} of {self.lofo_runs} leave-one-family-out runs"
            return out + (f", {self.views} of {self.views_runs} views" if self._has_views() else "")
        out = f"{self.lofo}/{self.lofo_runs}"
        return out + (f" · {self.views}/{self.views_runs}" if self._has_views() else "")


def _verdicts(res: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(prefix, method) → ``better`` / ``worse`` of a reference-test table."""
    out = {}
    for prefix in PREFIXES:
        col = f"{prefix}direction"
        if res.empty or col not in res:
            continue
        for m, d in res[col].items():
            if d in VERDICTS:
                out[(prefix, str(m))] = str(d)
    return out


def lofo_kept(
    pairs: Mapping[str, tuple[pd.DataFrame, dict[str, pd.Series]]],
    verdicts: Mapping[tuple[str, str], str],
    *,
    alpha: float = 0.05,
) -> dict[tuple[str, str], tuple[int, int]]:
    """(prefix, method) → (runs keeping its verdict, runs): ``pairs`` are the tested scores
    (:func:`ufs.stats.references.paired_scores`), ``verdicts`` the directions to keep; each
    row (family) of a reference's scores is left out in turn and the test of every method
    recomputed (Wilcoxon, Holm over the same methods, no interval)."""
    out = {}
    for prefix, (scores, refs) in pairs.items():
        wanted = {m: d for (p, m), d in verdicts.items() if p == prefix and m in scores}
        if not wanted or scores.empty:
            continue
        kept = dict.fromkeys(wanted, 0)
        for row in scores.index:
            t = paired.compare_to_reference(
                scores.drop(index=row),
                {m: r.drop(index=row, errors="ignore") for m, r in refs.items()},
                alpha=alpha,
                bayes=False,
                ci=False,
            )
            for m, d in wanted.items():
                kept[m] += bool(m in t.index and t.at[m, "direction"] == d)
        out.update({(prefix, m): (k, len(scores.index)) for m, k in kept.items()})
    return out


_KEYS = {("rand_", "better"): "better_random", ("rand_", "worse"): "worse_random"}
_KEYS |= {("all_", "better"): "better_all", ("all_", "worse"): "worse_all"}


def views_kept(
    rows: Mapping[str, Mapping[str, object]], verdicts: Mapping[tuple[str, str], str]
) -> dict[tuple[str, str], tuple[int, int]]:
    """(prefix, method) → (views keeping its verdict, views keeping the method): ``rows``
    are :func:`ufs.report.sensitivity.sensitivity`'s (view key → its verdicts), the
    primary view not counted."""
    others = {k: r for k, r in rows.items() if k != views.PRIMARY.key and r.get("n")}
    out = {}
    for (prefix, m), d in verdicts.items():
        counted = [r for r in others.values() if m not in (r.get("left_out") or {})]
        kept = sum(m in r[_KEYS[(prefix, d)]] for r in counted)
        out[(prefix, m)] = (kept, len(counted))
    return out


def verdict_robustness(
    tables: pd.DataFrame,
    results: list[ranking.RankResult],
    tests: Mapping[tuple[str, str], pd.DataFrame],
    *,
    view=views.PRIMARY,
    include_variants: bool = False,
    min_h_values: int = 3,
    sensitivity_of: Callable[[str, str], Mapping[str, Mapping[str, object]]] | None = None,
) -> dict[tuple[str, str], dict[tuple[str, str], Kept]]:
    """(protocol, metric) → (prefix, method) → :class:`Kept` for every better / worse
    verdict of ``tests`` (:func:`ufs.stats.references.all_reference_tests` on ``results``'
    cells, under ``view``). ``sensitivity_of(protocol, metric)``: the sensitivity table's
    rows of that comparison (:func:`ufs.report.sensitivity.sensitivity`), for the views'
    count; None counts the leave-one-family-out runs alone."""
    out = {}
    for r in results:
        res = tests.get((r.protocol, r.metric), pd.DataFrame())
        verdicts = _verdicts(res)
        if not verdicts or r.cells.empty:
            continue
        pairs = references.paired_scores(
            tables,
            r.protocol,
            r.metric,
            include_variants=include_variants,
            min_h_values=min_h_values,
            view=view,
            cells=r.cells.index,
        )
        lofo = lofo_kept(pairs, verdicts, alpha=r.alpha)
        seen = views_kept(sensitivity_of(r.protocol, r.metric), verdicts) if sensitivity_of else {}
        out[(r.protocol, r.metric)] = {
            key: Kept(*lofo[key], *seen.get(key, (None, None))) for key in verdicts if key in lofo
        }
    return out


def annotate(names, kept: Mapping[tuple[str, str], Kept] | None, prefix: str) -> str:
    """Method names as a verdict line lists them, each followed by its counts
    (:meth:`Kept.text`) where ``kept`` has them: ``\\`mcfs\\` (fragile: …)``; ``none`` for no
    name."""
    if not len(names):
        return "none"
    parts = []
    for m in names:
        k = (kept or {}).get((prefix, str(m)))
        parts.append(f"`{m}`" + (f" ({k.text()})" if k is not None else ""))
    return ", ".join(parts)
