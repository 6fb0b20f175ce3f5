"""Table cells that compete for best, independent of the output format: the markdown
tables (:mod:`ufs.report.aggregate`) and the LaTeX ones (:mod:`ufs.report.latex`) mark the
same best and runner-up values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ELIGIBLE", "Cell", "Row", "emphasis"]

#: roles eligible for best / runner-up (the registry's competitors and variants)
ELIGIBLE = ("method", "variant")


@dataclass(frozen=True)
class Cell:
    """A table cell: its ``text`` (markdown or LaTeX) and the printed ``value`` that
    competes for best (``None``: not compared)."""

    text: str
    value: float | None = None


@dataclass(frozen=True)
class Row:
    """A table row: its ``name``, cells and role (``method``/``variant``: eligible
    for best; ``reference``: set apart in italics; ``note``: statistics below, plain)."""

    name: str
    cells: tuple[Cell, ...]
    role: str = "method"


def emphasis(rows: Sequence[Row], higher_is_better: bool = True) -> list[list[str]]:
    """Per row and column ``"best"``, ``"second"`` or ``""``: among the eligible rows'
    values in each column, every row at the best value and every row at the next one."""
    out = [[""] * len(r.cells) for r in rows]
    ncols = max((len(r.cells) for r in rows), default=0)
    for c in range(ncols):
        values = {
            i: r.cells[c].value
            for i, r in enumerate(rows)
            if r.role in ELIGIBLE and c < len(r.cells) and _comparable(r.cells[c].value)
        }
        ranked = sorted(set(values.values()), reverse=higher_is_better)
        for i, v in values.items():
            if v == ranked[0]:
                out[i][c] = "best"
            elif len(ranked) > 1 and v == ranked[1]:
                out[i][c] = "second"
    return out


def _comparable(value) -> bool:
    return value is not None and bool(np.isfinite(value))
