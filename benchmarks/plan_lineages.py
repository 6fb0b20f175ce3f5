"""The plan's lineages of an archive, as the code of *this checkout* computes them: the
``--before`` file of ``ufs benchmark-migrate`` across a declared refactor.

    PYTHONPATH=<checkout before the refactor> python benchmarks/plan_lineages.py \\
        ARCHIVE OUT.json [--mirror-dir DIR]

Run it with the checkout before the refactor first on ``PYTHONPATH`` (a ``git worktree``
of that commit), from a directory that is not the repository (the current directory would
shadow ``PYTHONPATH``), then ``ufs benchmark-migrate ARCHIVE --before OUT.json`` with the
code after it. It uses only what every lineage-scheme-2 checkout has (the archive reader,
``build_plan``, ``PlanLineage``), so it runs against older commits too: the stability
records' lineages are added for a checkout whose records keep one but whose
``plan_lineages`` lists chunks only (2026-12-07), and absent before records kept one.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import yaml

import ufs

# the package layout of 2026-11-28 on, or the one before it; decided by the files
# of the ufs on PYTHONPATH (an editable install elsewhere would otherwise supply the other)
if (Path(ufs.__file__).parent / "pipeline" / "lineage.py").is_file():
    from ufs.pipeline import config as plan_config
    from ufs.pipeline import lineage
    from ufs.pipeline.archive import read_archive, restore_archive
else:
    from ufs.bench.archive import read_archive, restore_archive

    from ufs.bench import config as plan_config
    from ufs.bench import lineage

if hasattr(lineage, "plan_lineages"):
    plan_lineages = lineage.plan_lineages
else:  # a checkout from before plan_lineages (lineage scheme 2, 2026-11-27)

    def plan_lineages(results_dir, config, *, mirror_dir=None):
        build_plan, PlanLineage = plan_config.build_plan, lineage.PlanLineage

        cfg = {**config, **({"mirror_dir": mirror_dir} if mirror_dir is not None else {})}
        plan = build_plan(cfg, warn=False)
        keys = PlanLineage(plan, cfg, results_dir)
        return {
            f"{d}/{c}": keys.chunk_lineage(d, c) for d in plan.instances for c in plan.chunks(d)
        }


def with_stability(out, results_dir, config, mirror_dir=None):
    """``out`` and the stability jobs' lineages, as ``plan_lineages`` lists them where it
    does (``"stability/<data set>/<method>"``), when this checkout keys stability records."""
    if any(k.startswith("stability/") for k in out) or not hasattr(
        lineage.PlanLineage, "stability_lineage"
    ):
        return out
    from ufs.pipeline.stability_step import stability_config, stability_jobs, stability_settings

    cfg = {**config, **({"mirror_dir": mirror_dir} if mirror_dir is not None else {})}
    plan = plan_config.build_plan(cfg, warn=False)
    keys = lineage.PlanLineage(plan, cfg, results_dir)
    settings, stability = stability_settings(plan), stability_config(cfg)
    for d, m, h in stability_jobs(plan, cfg):
        out[f"stability/{d}/{m}"] = keys.stability_lineage(d, settings[m], h, stability)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archive")
    ap.add_argument("out")
    ap.add_argument("--mirror-dir", default=None)
    args = ap.parse_args()
    manifest, _ = read_archive(args.archive)
    config = yaml.safe_load(manifest["config"]["text"]) or {}
    with tempfile.TemporaryDirectory(prefix="ufs-lineages-") as tmp:
        root = Path(tmp) / "results"
        restore_archive(args.archive, root)
        out = plan_lineages(root, config, mirror_dir=args.mirror_dir)
        out = with_stability(out, root, config, mirror_dir=args.mirror_dir)
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    stab = sum(k.startswith("stability/") for k in out)
    print(
        f"{len(out) - stab} chunk and {stab} stability lineages of {args.archive} "
        f"written to {args.out}"
    )


if __name__ == "__main__":
    main()
