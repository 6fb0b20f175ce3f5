"""The seed papers' reproductions from their archives.

A reproduction run (``snakemake --configfile config/experiments/<paper>.yaml``) is
archived like the benchmark (``ufs benchmark-archive --results results/<paper> --config
config/experiments/<paper>.yaml --out benchmarks/results/reproduction-<paper>.tar.xz``).
:func:`restore_reproductions` rebuilds, from each archive alone, what ``ufs reproduction``
reads of a run: the per-data-set tables (CSV and markdown) from the evaluations by the
workflow's own code, ``timing.json`` from the archived Snakemake benchmark files, and the
comparison with the paper's published cells (``config/published/<paper>.csv``). Nothing
is fitted or evaluated, and the report depends on the archives only.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ..fileio import read_json, write_text
from ..pipeline.archive import read_archive, restore_archive, task_keys
from .aggregate import timing_summary, write_dataset_outputs, write_dataset_tables
from .compare import write_comparison

__all__ = ["restore_reproductions", "withhold_unfinished"]

PUBLISHED_DIR = Path(__file__).resolve().parents[2] / "config" / "published"


def _run_name(manifest: dict, archive: Path) -> str:
    config = yaml.safe_load(manifest["config"]["text"]) or {}
    name = config.get("published") or Path(str(config.get("output_dir", ""))).name
    if not name:
        name = archive.name.removesuffix(".tar.xz").removeprefix("reproduction-")
    return str(name)


def restore_reproductions(
    archives: list[str | Path],
    folder: str | Path,
    *,
    published_dir: str | Path | None = None,
    figures: bool = True,
) -> dict[str, Path]:
    """Restore each archive into ``folder/<run>/`` with its tables, timing and comparison
    (module docstring); returns run name → its archive. ``published_dir``: where the
    published tables are (default: the repository's ``config/published``). ``figures``:
    also draw each data set's figures and the comparison's scatter plot, as the workflow
    does (the report reads none of them: ``ufs reproduction`` restores without). Two
    archives of one run are an error."""
    folder = Path(folder)
    pub_dir = Path(published_dir) if published_dir is not None else PUBLISHED_DIR
    names: dict[str, Path] = {}
    for archive in sorted(Path(a) for a in archives):
        manifest, _ = read_archive(archive)
        name = _run_name(manifest, archive)
        if name in names:
            raise ValueError(f"two archives of the run {name!r} (the second: {archive})")
        names[name] = archive
        run = folder / name
        restore_archive(archive, run)
        config = yaml.safe_load(manifest["config"]["text"]) or {}
        pending = withhold_unfinished(run, config)
        write_text(
            run / "in_progress.json",
            json.dumps({f"{d}/{m}": why for (d, m), why in sorted(pending.items())}) + "\n",
        )
        oracle_metric = (config.get("evaluation") or {}).get("oracle_metric", "acc")
        by_base: dict[str, list[Path]] = {}
        evaluations = sorted((run / "evaluations").glob("*/*.json"))
        for path in evaluations:
            base = read_json(path)["evaluations"][0]["dataset_base"]
            by_base.setdefault(base, []).append(path)
        for base, files in sorted(by_base.items()):
            tables = (run / "tables" / f"{base}.csv", run / "tables" / f"{base}.md")
            if figures:
                write_dataset_outputs(files, base, *tables, run / "figures" / base, oracle_metric)
            else:
                write_dataset_tables(files, base, *tables, oracle_metric)
        tsvs = [
            p for p in sorted((run / "benchmarks").glob("**/*.tsv")) if p.parent.name != "summary"
        ]
        write_text(run / "timing.json", json.dumps(timing_summary(tsvs, evaluations)) + "\n")
        paper = config.get("published")
        if paper:
            restarts = int((config.get("evaluation") or {}).get("restarts", 20))
            out = run / "comparison"
            write_comparison(
                pub_dir / f"{paper}.csv",
                sorted((run / "tables").glob("*.csv")),
                out / f"{paper}.csv",
                out / f"{paper}.md",
                out / f"{paper}.png" if figures else None,
                paper=str(paper),
                restarts=restarts,
                pending=pending,
            )
    return names


def withhold_unfinished(run: Path, config: dict) -> dict[tuple[str, str], str]:
    """A run archived before it finished: remove each method's evaluations on each data set
    where some of the method's planned jobs are missing (its label-tuned best would be a
    best over part of the grid, or over some replicates), and return (data set, method) →
    ``"in progress (k of m jobs)"``. A planned method with no job done on a data set that
    other methods of the run reached is in progress too (``0 of m``): the run stopped before
    it. On a data set no job reached, the registries' reason stays (network-only data, not
    run). A config without a plan here withholds nothing."""
    from collections import defaultdict

    from ..pipeline.config import ConfigError, build_plan
    from .compare import IN_PROGRESS

    try:
        plan = build_plan({**config, "offline_only": False}, warn=False)
    except (ConfigError, ValueError):
        return {}
    jobs: dict[tuple[str, str], list[tuple[Path, set]]] = defaultdict(list)
    for d, inst in plan.instances.items():
        for chunk, tasks in plan.chunks(d).items():
            keys = {(t.method, t.pid, t.hkey) for t in tasks}
            jobs[(inst.base, tasks[0].method)].append(
                (run / "evaluations" / d / f"{chunk}.json", keys)
            )
    present = {pair: [p for p, _ in planned if p.exists()] for pair, planned in jobs.items()}
    started = {base for (base, _m), paths in present.items() if paths}
    pending: dict[tuple[str, str], str] = {}
    for (base, method), planned in sorted(jobs.items()):
        there = present[(base, method)]
        done = sum(
            1 for path, keys in planned if path in there and task_keys(read_json(path)) == keys
        )
        if base in started and done < len(planned):
            for path in there:
                path.unlink()
            pending[(base, method)] = f"{IN_PROGRESS} ({done} of {len(planned)} jobs)"
    return pending
