"""Benchmark results that outlive a machine: a compact, versioned archive of a
run's source of truth, and its restoration on a fresh machine.

An archive (``benchmarks/results/<run>.tar.xz``) holds

* ``MANIFEST.json``: the archive format, the commit of the code that wrote the archive
  (``commit``), the commits the results were computed at (``computed_at``: every
  evaluation's ``git_commit``, with how many evaluations each computed; they differ from
  ``commit`` when a run was made in another checkout or continued across commits), the
  config the run was made with (its text and sha256), the per-fit budget, a note on how
  the run was made, counts, and the sha256 of every other member;
* ``evaluations/<dataset>/<chunk>.json``: the per-fit evaluations (per-restart metrics,
  selected features, fit facts) — each records its *lineage*, the workflow's key of the
  data, fit tasks, code, budget and evaluation settings it was made with;
* ``benchmarks/**.tsv``: the Snakemake benchmark file of every job (the compute record),
  and ``logs/**.warm.json``: the CPU of jobs run in a warm worker, which their benchmark
  file does not measure (``workflow/scripts/_warm.py``);
* ``data/<dataset>.json``: the data records (shape, constant features dropped).

Fits (``fits/*.npz``), data matrices and figures are left out: they are large and rebuilt
from the members above (figures, tables) or not needed again. :func:`restore_archive`
writes the members back into a results folder; the workflow then counts a restored
evaluation as done without its fit files when its lineage is the current plan's
(``workflow/rules/common.smk``: ``restored_evaluation``), so ``snakemake`` resumes the
run, fitting only what the archive lacks or what changed, and rebuilds every table,
figure and report. ``ufs benchmark-report --archive`` writes the report from an archive
alone (:func:`ufs.report.archive_tables.report_inputs_from_archive`).

The archive's bytes depend only on its members: members in sorted order, with a fixed
time stamp, owner and mode, compressed with xz at preset 9.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..fileio import atomic_path, read_json, write_json
from .provenance import git_commit

__all__ = [
    "ARCHIVE_FORMAT",
    "MANIFEST",
    "ArchiveError",
    "archive_members",
    "computed_at",
    "describe_commits",
    "write_archive",
    "read_archive",
    "restore_archive",
]

#: the archive layout version (``MANIFEST.json["format"]``)
ARCHIVE_FORMAT = 1
MANIFEST = "MANIFEST.json"
#: the results-folder members an archive holds: (folder, file pattern)
MEMBER_GLOBS = (
    ("evaluations", "*/*.json"),
    ("benchmarks", "**/*.tsv"),
    # the CPU of jobs run in a warm worker, which their benchmark file does not measure
    # (workflow/scripts/_warm.py; ufs.report.aggregate.warm_cpu)
    ("logs", "**/*.warm.json"),
    ("data", "*.json"),
    # the selection stability of each method and data set (ufs.pipeline.stability_step)
    ("stability", "*/*.json"),
)
#: the fixed time stamp of every member (2000-01-01): the bytes do not depend on when
#: the files were written
_MTIME = 946_684_800


class ArchiveError(ValueError):
    """An archive that is damaged, not an archive of this format, or would overwrite a
    different file on restoring."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def archive_members(results_dir: str | Path) -> list[str]:
    """The members of ``results_dir`` an archive holds (paths relative to it, sorted);
    files whose name starts with a dot (temporary files of an atomic write) are left out."""
    root = Path(results_dir)
    out = set()
    for folder, pattern in MEMBER_GLOBS:
        for path in (root / folder).glob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and not any(part.startswith(".") for part in rel.parts):
                out.add(rel.as_posix())
    return sorted(out)


def _counts(members: Iterable[str]) -> dict[str, int]:
    members = list(members)
    evaluations = [m for m in members if m.startswith("evaluations/")]
    return {
        "evaluations": len(evaluations),
        "datasets": len({m.split("/")[1] for m in evaluations}),
        "benchmark_files": sum(m.startswith("benchmarks/") for m in members),
        "warm_cpu_records": sum(m.startswith("logs/") for m in members),
        "data_records": sum(m.startswith("data/") for m in members),
        "stability_records": sum(m.startswith("stability/") for m in members),
        "input_scaling_tables": sum(m.startswith("input_scaling/") for m in members),
    }


def computed_at(blobs: dict[str, bytes]) -> dict[str, int]:
    """Commit → number of evaluations computed at it, from the ``git_commit`` every
    evaluation records (the fit job's checkout, ``-dirty`` when tracked files differed;
    ``""``: not in a git checkout, or an evaluation older than the field)."""
    out: dict[str, int] = {}
    for name in sorted(blobs):
        if name.startswith("evaluations/") and name.endswith(".json"):
            for ev in json.loads(blobs[name]).get("evaluations", []):
                sha = str(ev.get("git_commit") or "")
                out[sha] = out.get(sha, 0) + 1
    return dict(sorted(out.items()))


def describe_commits(counts: dict[str, int]) -> str:
    """``computed_at`` as a phrase: ``"3d3243e1a2b4 (57 evaluations), 8501a2e0c9d1 (3)"``
    (short commits, most evaluations first; ``unknown`` for evaluations without one)."""
    if not counts:
        return "no evaluations"
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{(sha[:12] + sha[40:]) if sha else 'unknown'} ({n})" for sha, n in items]
    parts[0] = parts[0][:-1] + (" evaluations)" if items[0][1] != 1 else " evaluation)")
    return ", ".join(parts)


def config_text(paths: Sequence[str | Path]) -> tuple[str, str]:
    """(label, YAML text) of the config a run was made with: one file as it is; several
    (``--configfile base overlay``) merged as Snakemake merges them
    (:func:`ufs.pipeline.config.merge_configs`), under a comment naming the files."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise ArchiveError("no config file given")
    label = " + ".join(p.as_posix() for p in paths)
    if len(paths) == 1:
        return label, paths[0].read_text()
    from .config import merge_configs

    merged = merge_configs(*(yaml.safe_load(p.read_text()) or {} for p in paths))
    head = f"# merged as Snakemake merges --configfile {' '.join(p.as_posix() for p in paths)}\n"
    return label, head + yaml.safe_dump(merged, sort_keys=False, allow_unicode=True)


#: the distributions whose installed versions an archive records (what computed it)
RECORDED_PACKAGES = (
    "ufs-bench",
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "matplotlib",
    "mlflow",
    "snakemake",
    "faiss-cpu",
)


def installed_versions() -> dict[str, str]:
    """The Python version and the installed version of each of :data:`RECORDED_PACKAGES`
    (``"not installed"`` where one is missing), for an archive's manifest."""
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def write_archive(
    results_dir: str | Path,
    config_path: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    note: str = "",
    commit: str | None = None,
    input_scaling: str | Path | None = None,
    config_label: str | None = None,
    environment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write the archive ``out`` (atomically) of ``results_dir``'s evaluations, benchmark
    files and data records, with the config ``config_path`` the run was made with and
    ``note`` (how the run was made: overlays, slices; shown by the report); several
    config files (a base and overlays) are stored merged (:func:`config_text`). Every
    evaluation is read first (:func:`ufs.fileio.read_json` verifies its checksum), so a
    damaged one stops the archive. ``commit``: the code that writes the archive, default
    the checkout's (the results' own commits are ``computed_at``, :func:`computed_at`). ``input_scaling``:
    the folder of the input-scaling runs (``<dir>/<space>/tables/*.csv``), whose tables
    the report compares; archived as ``input_scaling/<space>/tables/*.csv``.
    ``config_label``: the config's name in the manifest (default: its file names).
    ``environment``: the package versions to record (default :func:`installed_versions`;
    an archive written again keeps its own). Returns the manifest."""
    root = Path(results_dir)
    members = archive_members(root)
    sources = {m: root / m for m in members}
    if input_scaling is not None:
        for path in sorted(Path(input_scaling).glob("*/tables/*.csv")):
            name = "input_scaling/" + path.relative_to(input_scaling).as_posix()
            sources[name] = path
        members = sorted(sources)
    if not any(m.startswith("evaluations/") for m in members):
        raise ArchiveError(f"{root} holds no evaluations to archive")
    for m in members:
        if m.endswith(".json"):
            read_json(sources[m])  # a damaged file stops here, named
    paths = [config_path] if isinstance(config_path, (str, Path)) else list(config_path)
    label, text = config_text(paths)
    config = yaml.safe_load(text) or {}
    blobs = {m: sources[m].read_bytes() for m in members}
    manifest = {
        "format": ARCHIVE_FORMAT,
        "commit": git_commit() if commit is None else commit,
        "computed_at": computed_at(blobs),
        "config": {
            "path": config_label or label,
            "sha256": _sha256(text.encode()),
            "text": text,
        },
        "budget_seconds": (config.get("jobs") or {}).get("fit_budget_seconds"),
        "environment": installed_versions() if environment is None else environment,
        "note": note,
        "counts": _counts(members),
        "files": {m: _sha256(b) for m, b in blobs.items()},
    }
    _write_members(out, manifest, blobs)
    return manifest


def _write_members(out: str | Path, manifest: dict[str, Any], blobs: dict[str, bytes]) -> None:
    blob = json.dumps(manifest, indent=1, sort_keys=True).encode() + b"\n"
    with atomic_path(out, suffix=".tmp") as tmp:
        with tarfile.open(tmp, "w:xz", preset=9, format=tarfile.PAX_FORMAT) as tar:
            for name, data in [(MANIFEST, blob)] + sorted(blobs.items()):
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), _MTIME, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))


def set_archive_note(archive: str | Path, note: str) -> dict[str, Any]:
    """Replace the note of ``archive`` (how the run was made, rendered by the report) by
    ``note``, atomically: the members and every other manifest field stay byte for byte
    (:func:`read_archive` checks them first). Returns the new manifest."""
    manifest, blobs = read_archive(archive)
    note = " ".join(note.split())
    if not note:
        raise ArchiveError("an archive's note cannot be empty: say how the run was made")
    manifest = {**manifest, "note": note}
    _write_members(archive, manifest, blobs)
    return manifest


def _safe_name(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def read_archive(path: str | Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and the members (name → bytes) of the archive ``path``, every member
    checked against the manifest's sha256; :class:`ArchiveError` for a damaged archive, a
    member the manifest does not list (or the reverse), a link or a path outside the
    archive's folder."""
    path = Path(path)
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:xz") as tar:
            for info in tar:
                if not info.isfile() or not _safe_name(info.name):
                    raise ArchiveError(f"{path}: member {info.name!r} is not a plain relative file")
                members[info.name] = tar.extractfile(info).read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(f"{path} is not a readable .tar.xz archive: {exc}") from None
    if MANIFEST not in members:
        raise ArchiveError(f"{path} has no {MANIFEST}: not a UFS-bench results archive")
    manifest = json.loads(members.pop(MANIFEST))
    if manifest.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError(
            f"{path}: archive format {manifest.get('format')!r}; this version reads "
            f"format {ARCHIVE_FORMAT}"
        )
    listed = manifest.get("files") or {}
    if set(listed) != set(members):
        extra, lost = sorted(set(members) - set(listed)), sorted(set(listed) - set(members))
        raise ArchiveError(f"{path}: members not in the manifest {extra[:5]}, missing {lost[:5]}")
    bad = [m for m, data in members.items() if _sha256(data) != listed[m]]
    if bad:
        raise ArchiveError(f"{path}: {len(bad)} member(s) fail their sha256, e.g. {bad[:3]}")
    return manifest, members


def restore_archive(
    archive: str | Path, results_dir: str | Path, *, force: bool = False
) -> dict[str, int]:
    """Write the archive's members into ``results_dir`` (each atomically; the written files
    are newer than the checkout's workflow scripts, as Snakemake requires of outputs).

    A member already present with the same bytes is left alone (its time stamp too); one
    present with different bytes is an :class:`ArchiveError` unless ``force`` (then the
    archive's version replaces it): a restore never silently replaces newer results.
    Returns counts: ``written``, ``unchanged``, ``replaced``."""
    _, members = read_archive(archive)
    root = Path(results_dir)
    differ = [
        m for m, data in members.items() if (root / m).exists() and (root / m).read_bytes() != data
    ]
    if differ and not force:
        raise ArchiveError(
            f"{len(differ)} file(s) in {root} differ from the archive's, e.g. {differ[:3]}; "
            "restore into an empty results folder, or pass --force to replace them"
        )
    counts = {"written": 0, "unchanged": 0, "replaced": 0}
    for name, data in sorted(members.items()):
        target = root / name
        if target.exists() and name not in differ:
            counts["unchanged"] += 1
            continue
        counts["replaced" if name in differ else "written"] += 1
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
    return counts


def task_keys(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The (method, setting, h key) tasks an evaluation file holds: compared with a plan
    chunk's tasks to tell a finished job."""
    return {(e["method"], e["pid"], e["hkey"]) for e in doc["evaluations"]}


def curate_evaluations(folder: str | Path, config: dict[str, Any]) -> dict[str, str]:
    """Make the evaluations restored in ``folder`` what the workflow would aggregate for
    ``config``'s plan, data set by data set (an archive of a run in progress holds, for a
    data set whose label-tuned grid is half done, new chunks beside the previous run's):

    * every planned chunk present with exactly its planned tasks: kept as is
      (``"complete"``);
    * otherwise, if every label-free setting has an evaluation: the data set is kept with
      its label-free records only (the first of duplicates, current chunks first; none of
      them a label-tuned candidate) — ``"label-free only (label-tuned k of m jobs done)"``;
    * otherwise its evaluations are removed: ``"in progress"`` (reported as missing).

    A chunk the plan does not have (left by an earlier plan) is removed. Returns the
    status of every data set whose evaluations were not complete."""
    from .config import ConfigError, build_plan

    try:
        plan = build_plan({**config, "offline_only": False}, warn=False)
    except (ConfigError, ValueError) as exc:  # e.g. a data set this version does not know
        return {"(every data set)": f"reported as archived; the config has no plan here: {exc}"}
    out: dict[str, str] = {}
    for inst_dir in sorted(Path(folder, "evaluations").glob("*")):
        d = inst_dir.name
        if d not in plan.instances:
            continue
        chunks = {c: {(t.method, t.pid, t.hkey) for t in ts} for c, ts in plan.chunks(d).items()}
        paths = {p.stem: p for p in sorted(inst_dir.glob("*.json"))}
        docs = {c: read_json(p) for c, p in paths.items()}
        current = {c for c in chunks if c in docs and task_keys(docs[c]) == chunks[c]}
        if current == set(chunks) and set(docs) == set(chunks):
            continue
        needed = {
            (s.method, s.pid)
            for m in plan.settings
            for s in plan.dataset_settings(m, d)
            if s.label_free
        }
        seen: set[tuple[str, str, str]] = set()
        kept: dict[str, list[dict[str, Any]]] = {}
        for c in sorted(docs, key=lambda c: (c not in current, c)):
            kept[c] = []
            for e in docs[c]["evaluations"]:
                key = (e["method"], e["pid"], e["hkey"])
                if e.get("label_free") and key not in seen:
                    seen.add(key)
                    kept[c].append({**e, "in_grid": False})
        if not needed <= {(m, p) for m, p, _ in seen}:
            for p in paths.values():
                p.unlink()
            out[d] = "in progress"
            continue
        for c, p in paths.items():
            if kept[c]:
                write_json(p, {**docs[c], "evaluations": kept[c]})
            else:
                p.unlink()
        done = len(current)
        out[d] = f"label-free only (label-tuned {done} of {len(chunks)} jobs done)"
    return out
