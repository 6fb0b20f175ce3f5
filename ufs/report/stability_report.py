"""The stability table and its figure: for each method and data set, the stability of its
selections on seeded subsamples (:mod:`ufs.pipeline.stability_step`) beside its label-free
ACC at the same ``h`` (the data set's tables), and the CPU time the stability fits took.

A stability whose fits were flagged (not converged, diverged, degenerate) is marked with
the fits' worst status mark; one that could not be computed (a fit over its budget, every
selection empty) is shown as "–" with the reason.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..fileio import read_json, write_text
from ..pipeline.status import STATUS_MARK

__all__ = [
    "stability_frame",
    "stability_markdown",
    "stability_summary_lines",
    "write_stability_report",
]

COLUMNS = [
    "dataset",
    "method",
    "h",
    "m",
    "stability",
    "stability_low",
    "stability_high",
    "acc_mean",
    "status",
    "flagged",
    "cpu_seconds",
    "reason",
]


def _label_free_acc(tables: list[str | Path]) -> dict[tuple[str, str, int], float]:
    out: dict[tuple[str, str, int], float] = {}
    for path in tables:
        t = pd.read_csv(path)
        if t.empty:
            continue
        free = t[t["label_free"].astype(bool)]
        if "protocol" in free:
            free = free[free["protocol"].isin(["label_free"]) | free["protocol"].isna()]
        for (dataset, method, h), rows in free.groupby(["dataset", "method", "h"]):
            out[(str(dataset), str(method), int(h))] = float(rows["acc_mean"].iloc[0])
    return out


def stability_frame(files: list[str | Path], tables: list[str | Path] = ()) -> pd.DataFrame:
    """One row per stability file (data set × method), with its label-free ACC at that h
    where the tables have it (NaN otherwise)."""
    acc = _label_free_acc(list(tables))
    rows = []
    for f in files:
        r = read_json(f)
        dataset = Path(f).parent.name
        rows.append(
            {
                "dataset": dataset,
                "method": r["method"],
                "h": r["h"],
                "m": r["m"],
                "stability": r.get("stability"),
                "stability_low": r.get("stability_low"),
                "stability_high": r.get("stability_high"),
                "acc_mean": acc.get((dataset, r["method"], int(r["h"])), np.nan),
                "status": r.get("status", "ok"),
                "flagged": r.get("flagged", 0),
                "cpu_seconds": r.get("cpu_seconds", 0.0),
                "reason": r.get("reason", ""),
            }
        )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(["dataset", "method"], kind="stable").reset_index(drop=True)


def _cell(row) -> str:
    if row["stability"] is None or pd.isna(row["stability"]):
        return f"– ({row['reason'] or 'not computed'})"
    mark = STATUS_MARK.get(row["status"], "") if row["flagged"] else ""
    return f"{row['stability']:.3f} [{row['stability_low']:.3f}, {row['stability_high']:.3f}]{mark}"


def stability_markdown(frame: pd.DataFrame) -> str:
    """The table as markdown: per method, its stability per data set with the interval,
    the median over data sets, and the stability fits' CPU time."""
    if frame.empty:
        return "# Selection stability\n\nNo method selects here: nothing to measure.\n"
    m = int(frame["m"].iloc[0])
    lines = [
        "# Selection stability",
        "",
        f"Each method's label-free setting fitted on {m} seeded subsamples (90 % of the "
        "samples by default, config `stability`) at the middle h of each data set; Φ̂ of "
        "Nogueira, Sechidis & Brown (2018) with its 95 % interval (1 = the same features "
        "every time, 0 = chance). A mark (†, ‡, ◊, §) says some of the fits were flagged. "
        "ACC is the method's label-free ACC on all samples at the same h.",
        "",
        "| method | median Φ̂ | " + " | ".join(sorted(frame["dataset"].unique())) + " | CPU-s |",
        "|---|---:|" + "---:|" * frame["dataset"].nunique() + "---:|",
    ]
    datasets = sorted(frame["dataset"].unique())
    for method, rows in frame.groupby("method", sort=True):
        by = {r["dataset"]: r for _, r in rows.iterrows()}
        values = pd.to_numeric(rows["stability"], errors="coerce")
        med = f"{values.median():.3f}" if values.notna().any() else "–"
        cells = [_cell(by[d]) if d in by else "" for d in datasets]
        lines.append(
            f"| {method} | {med} | " + " | ".join(cells) + f" | {rows['cpu_seconds'].sum():.1f} |"
        )
    total = frame["cpu_seconds"].sum()
    lines += ["", f"The stability fits took {total:.1f} CPU-s in all.", ""]
    return "\n".join(lines)


def stability_summary_lines(csv: str | Path, link: str) -> list[str]:
    """The summary's section: each method's median stability over the data sets (most
    stable first; ties shown as ties), and a link to the full table ``link``."""
    frame = pd.read_csv(csv)
    lines = ["## Selection stability", ""]
    values = frame.assign(stability=pd.to_numeric(frame["stability"], errors="coerce"))
    med = values.groupby("method")["stability"].median().dropna()
    if med.empty:
        return lines + [f"No stability could be computed ([{link}]({link})).", ""]
    m = int(frame["m"].iloc[0])
    ranked = sorted(med.items(), key=lambda kv: (-round(kv[1], 3), kv[0]))
    cells = ", ".join(f"{name} {value:.3f}" for name, value in ranked)
    missing = sorted(set(frame["method"]) - set(med.index))
    lines.append(
        f"Median Φ̂ over the data sets ({m} seeded subsamples each, label-free settings, the "
        f"middle h; 1 = the same features every time, 0 = chance): {cells}."
        + (f" Not computed for {', '.join(missing)}." if missing else "")
        + f" Per data set, with intervals and flags: [{link}]({link})."
    )
    return lines + [""]


def _figure(frame: pd.DataFrame, png: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .figures import method_style, save_figure

    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    ok = frame.dropna(subset=["stability", "acc_mean"])
    for method, rows in ok.groupby("method", sort=True):
        style = method_style(method)
        ax.scatter(
            100 * rows["acc_mean"].astype(float),
            rows["stability"].astype(float),
            color=style["color"],
            marker=style["marker"],
            label=method,
            s=22,
        )
    ax.axhline(0.0, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel("label-free ACC (%) at the stability's h")
    ax.set_ylabel("stability Φ̂ (subsamples)")
    ax.set_title("Selection stability against clustering accuracy")
    if not ok.empty:
        ax.legend(fontsize=6, ncol=2, loc="best", frameon=False)
    else:
        ax.text(0.5, 0.5, "no stability with an ACC", ha="center", transform=ax.transAxes)
    save_figure(fig, png)  # and its PDF twin


def write_stability_report(
    files: list[str | Path],
    tables: list[str | Path],
    out_csv: str | Path,
    out_md: str | Path,
    out_png: str | Path,
) -> pd.DataFrame:
    """The stability CSV, its markdown table and the figure of stability against ACC
    (``out_png`` and its PDF twin)."""
    frame = stability_frame(files, tables)
    write_text(out_csv, frame.to_csv(index=False))
    write_text(out_md, stability_markdown(frame))
    _figure(frame, out_png)
    return frame
