"""What the tables of a sliced run show.

A run may cover a slice of its config (``only_methods``, ``only_datasets``): it fits and
evaluates only the slice, and leaves every other method's evaluation files alone. A slice
by method runs the config's references as well (all features, random, ...: registry role
``reference``; config ``slice_references``, default true), since every verdict of the
slice's methods is against them; evaluations of theirs already on disk make no job. Its
tables and summary are built from **every evaluation of the config's plan that is on
disk** — the slice's, and those earlier runs left — and say which of the config's
methods and data sets they leave out (no evaluation on disk). Before this, a slice
rewrote ``tables/<data set>.csv`` and the summary with the slice's methods only, silently
dropping every other method until the next full run.

The evaluations an earlier run left were made by the code of that run; a plain
``snakemake`` run of the whole config re-makes those whose code or parameters changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SliceView", "full_config", "slice_view", "slice_note"]


def full_config(config: dict[str, Any]) -> dict[str, Any] | None:
    """``config`` without its slice (``only_methods``, ``only_datasets``); ``None`` when it
    has none."""
    if not (config.get("only_methods") or config.get("only_datasets")):
        return None
    return {**config, "only_methods": [], "only_datasets": []}


@dataclass
class SliceView:
    """The evaluation files a sliced run's tables add from earlier runs, and what they
    leave out. Empty for a run of the whole config."""

    only_methods: list[str] = field(default_factory=list)
    only_datasets: list[str] = field(default_factory=list)
    #: data set base -> evaluation files of the config's plan outside the slice, on disk
    earlier: dict[str, list[str]] = field(default_factory=dict)
    #: data set base -> methods of the config with no evaluation on disk
    left_out: dict[str, list[str]] = field(default_factory=dict)
    #: data set bases of the config outside the slice (their tables are not rebuilt)
    datasets_left_out: list[str] = field(default_factory=list)
    #: the config's references the slice runs too (config ``slice_references``)
    kept_references: list[str] = field(default_factory=list)

    @property
    def sliced(self) -> bool:
        return bool(self.only_methods or self.only_datasets)


def slice_view(config: dict[str, Any], sliced, full, out: str | Path) -> SliceView:
    """The :class:`SliceView` of the plan ``sliced`` (the run) within ``full`` (the
    config's whole plan; :class:`ufs.pipeline.config.Plan` both), output directory ``out``."""
    view = SliceView(
        only_methods=list(config.get("only_methods") or []),
        only_datasets=list(config.get("only_datasets") or []),
        kept_references=list(getattr(sliced, "kept_references", [])),
    )
    if full is None:
        return view
    out = Path(out)
    bases = {i.base for i in sliced.instances.values()}
    view.datasets_left_out = sorted({i.base for i in full.instances.values()} - bases)
    for dataset, inst in full.instances.items():
        if inst.base not in bases:
            continue
        mine = set(sliced.chunks(dataset)) if dataset in sliced.instances else set()
        for chunk, tasks in full.chunks(dataset).items():
            if chunk in mine:
                continue
            path = out / "evaluations" / dataset / f"{chunk}.json"
            if path.exists():
                view.earlier.setdefault(inst.base, []).append(str(path))
            else:
                view.left_out.setdefault(inst.base, []).extend(t.method for t in tasks)
    view.left_out = {b: sorted(set(ms)) for b, ms in sorted(view.left_out.items())}
    return view


def slice_note(view: SliceView, base: str | None = None) -> list[str]:
    """Markdown lines saying what a sliced run's tables hold (``base``: one data set's
    tables; ``None``: the summary); none for a run of the whole config."""
    if not view.sliced:
        return []
    what = ", ".join(
        f"`{k}={v}`"
        for k, v in (("only_methods", view.only_methods), ("only_datasets", view.only_datasets))
        if v
    )
    bases = [base] if base is not None else sorted(set(view.earlier) | set(view.left_out))
    earlier = sorted({Path(f).stem.split(".")[0] for b in bases for f in view.earlier.get(b, [])})
    lines = [
        f"**A sliced run** ({what}): these tables hold every evaluation of the config "
        "on disk — the slice's"
        + (
            f", and {', '.join(earlier)} from earlier runs (made by those runs' code)"
            if earlier
            else ""
        )
        + "."
    ]
    if view.kept_references:
        lines.append(
            "The slice runs the config's references too, for its verdicts: "
            + ", ".join(view.kept_references)
            + " (`slice_references=false` leaves them out)."
        )
    left = {b: view.left_out[b] for b in bases if view.left_out.get(b)}
    if left:
        lines.append(
            "Left out (no evaluation on disk; a run of the whole config makes them): "
            + "; ".join(
                f"{b}: {', '.join(ms)}" if base is None else ", ".join(ms) for b, ms in left.items()
            )
            + "."
        )
    if base is None and view.datasets_left_out:
        lines.append(
            "Data sets of the config outside the slice, not in this summary: "
            + ", ".join(view.datasets_left_out)
            + "."
        )
    return [" ".join(lines), ""]
