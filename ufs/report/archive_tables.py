"""A report's inputs from an archive alone: the archive restored into a folder
with the per-data-set tables the workflow's own code computes from its evaluations, so
that ``ufs benchmark-report`` and ``ufs compare`` need no workflow run (the archive
format is :mod:`ufs.pipeline.archive`'s, the tables are the report's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..fileio import read_json
from ..pipeline.archive import curate_evaluations, read_archive, restore_archive
from .aggregate import write_dataset_csv

__all__ = ["report_inputs_from_archive"]


def report_inputs_from_archive(archive: str | Path, folder: str | Path) -> dict[str, Any]:
    """Restore ``archive`` into the empty ``folder`` with what ``ufs benchmark-report``
    reads: the members, the config (``folder/config.yaml``) and the per-data-set tables
    (``tables/<base>.csv``) computed from the evaluations by the workflow's own code
    (:func:`ufs.report.aggregate.write_dataset_csv`), after :func:`curate_evaluations` (a
    run in progress: what the workflow would aggregate). Returns the manifest, with the
    curation's statuses under ``"curated"``."""

    manifest, _ = read_archive(archive)
    folder = Path(folder)
    restore_archive(archive, folder)
    (folder / "config.yaml").write_text(manifest["config"]["text"])
    config = yaml.safe_load(manifest["config"]["text"]) or {}
    oracle_metric = (config.get("evaluation") or {}).get("oracle_metric", "acc")
    manifest["curated"] = curate_evaluations(folder, config)
    by_base: dict[str, list[Path]] = {}
    for path in sorted((folder / "evaluations").glob("*/*.json")):
        base = read_json(path)["evaluations"][0]["dataset_base"]
        by_base.setdefault(base, []).append(path)
    for base, files in sorted(by_base.items()):
        write_dataset_csv(files, base, folder / "tables" / f"{base}.csv", oracle_metric)
    return manifest
