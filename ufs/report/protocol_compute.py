"""What each protocol of a benchmark run cost: the fit and k-means CPU its settings' own
evaluations record.

A setting's evaluation records the CPU of its fits (``fit_cpu_seconds_total``) and of its
k-means restarts (``kmeans_cpu_seconds``), and whether it is the method's label-free
default (``label_free``) and in its label-tuned grid on that data set (``in_grid``). The
label-tuned protocol's grid holds the default, so the grid's own cost is given twice: in
all and beyond the defaults. The label-free tuned protocol picks among the same grid runs
(:mod:`ufs.stats.tuning`) and fits nothing of its own. The stability step is a workflow
step of its own, in the report's compute per step.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..pipeline.io import read_evaluations

__all__ = ["read_setting_compute", "protocol_compute_rows"]


def read_setting_compute(files: list[str | Path]) -> pd.DataFrame:
    """One row per evaluated setting of the evaluation ``files``: ``dataset`` (the base data
    set), ``label_free``, ``in_grid``, ``fit_cpu_s``, ``kmeans_cpu_s``. A record without the
    CPU of its fits (made before it was recorded) gives its wall time, as the run's summary
    does."""
    rows = [
        {
            "dataset": ev.get("dataset_base", ev["dataset"]),
            "label_free": bool(ev["label_free"]),
            "in_grid": bool(ev["in_grid"]),
            "fit_cpu_s": float(ev.get("fit_cpu_seconds_total", ev.get("fit_seconds_total", 0.0))),
            "kmeans_cpu_s": float(ev.get("kmeans_cpu_seconds", ev.get("kmeans_seconds", 0.0))),
        }
        for ev in read_evaluations(files)
    ]
    cols = ["dataset", "label_free", "in_grid", "fit_cpu_s", "kmeans_cpu_s"]
    return pd.DataFrame(rows, columns=cols)


def _row(name: str, part: pd.DataFrame) -> list[str]:
    return [
        name,
        str(part["dataset"].nunique()),
        str(len(part)),
        f"{part['fit_cpu_s'].sum() / 3600:.2f}",
        f"{part['kmeans_cpu_s'].sum() / 3600:.2f}",
    ]


def protocol_compute_rows(settings: pd.DataFrame) -> list[list[str]]:
    """The rows of the per-protocol compute table: protocol, data sets, settings evaluated,
    fit CPU-h, k-means CPU-h; the label-free row alone when no setting is in a grid."""
    grid = settings[settings["in_grid"]]
    rows = [_row("label-free (the defaults)", settings[settings["label_free"]])]
    if grid.empty:  # a label-free run: no other protocol
        return rows
    return rows + [
        _row("label-tuned (the grid, the defaults included)", grid),
        _row("label-tuned, beyond the defaults", grid[~grid["label_free"]]),
        [
            "label-free tuned",
            str(grid["dataset"].nunique()),
            "0",
            "0 (the label-tuned grid's runs)",
            "0",
        ],
    ]
