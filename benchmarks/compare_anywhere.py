"""``ufs compare`` on a researcher's machine: a fresh clone with no ``../shared`` beside
it, an empty data cache, and a millisecond method (Laplacian Score registered again under
a new name, ``ls_again``, from a config overlay), timed twice:

1. **without the data sets** (no mirror, empty cache): the command says which of the
   archive's data sets are missing and what fetching them costs, and places the method on
   the ones here (bundled and generated);
2. **with them** (``--mirror-dir``, the files a ``ufs data fetch`` would have cached): the
   placement on every data set of the archive.

Each phase is one ``ufs compare`` in the clone, run with the clone's own code (checked),
one BLAS thread per job, ``--cores`` Snakemake cores. The time of downloading is not in
phase 2 (it depends on the network; ``ufs data fetch`` prints each file's size); the
download sizes are in phase 1's output.

    python benchmarks/compare_anywhere.py --mirror-dir DIR [--cores 2] [--workdir DIR]

Prints both wall times, the fit jobs each ran (only ``ls_again``'s may run) and the
report's first line; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ufs.pipeline.scheduling import one_blas_thread_env

REPO = Path(__file__).resolve().parents[1]
METHOD = "ls_again"
OVERLAY = {
    "methods": {
        METHOD: {
            "class": "ufs.methods.laplacian_score:LaplacianScore",
            "defaults": {"n_neighbors": 5, "weight": "heat"},
        }
    }
}


def _env(clone: Path, cache: Path) -> dict[str, str]:
    env = {**os.environ, **one_blas_thread_env()}
    env.pop("UFS_MIRROR", None)
    env.update(UFS_DATA=str(cache), PYTHONPATH=str(clone))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _phase(clone: Path, env: dict[str, str], name: str, extra: list[str], cores: int) -> dict:
    cmd = [
        sys.executable, "-m", "ufs.cli", "compare", "--method", METHOD,
        "--config", "overlay.yaml", "--results", f"results/compare-{name}",
        "--cores", str(cores), *extra,
    ]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    log = clone / f"compare-{name}.log"
    log.write_text(proc.stdout + proc.stderr)
    report = clone / f"results/compare-{name}.md"
    first = report.read_text().splitlines()[0] if report.is_file() else ""
    fits = re.search(r"^fit jobs: (\d+) \(([^)]*)\)", proc.stdout, re.M)
    return {
        "wall": wall,
        "code": proc.returncode,
        "first": first,
        "fits": fits.group(0) if fits else "",
        "fitted": fits.group(2) if fits else "",
        "said": [ln for ln in proc.stdout.splitlines() if ln.startswith(("not here", "run cost"))],
        "log": log,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-dir", default=os.environ.get("UFS_MIRROR"), help="(UFS_MIRROR)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--workdir", default=None, help="where the clone goes (a temporary folder)")
    args = ap.parse_args(argv)
    if not args.mirror_dir or not Path(args.mirror_dir).is_dir():
        ap.error("--mirror-dir (or UFS_MIRROR): a folder holding the data sets' files")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="compare-anywhere-"))
    clone = work / "ufs-bench"
    if clone.exists():
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    assert not (clone.parent / "shared").exists(), "the clone has ../shared beside it"
    (clone / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY, sort_keys=False))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
    ).stdout.strip()
    cache = work / "cache"
    cache.mkdir(exist_ok=True)
    env = _env(clone, cache)
    where = subprocess.run(
        [sys.executable, "-c", "import ufs; print(ufs.__file__)"],
        env=env, cwd=clone, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if not Path(where).is_relative_to(clone):
        print(f"FAIL: the clone's run imports ufs from {where}, not from {clone}")
        return 1
    print(f"clone of {commit} in {clone}; data cache {cache} (empty); no mirror beside it")

    failed = False
    bare = _phase(clone, env, "bare", [], args.cores)
    full = _phase(clone, env, "full", ["--mirror-dir", str(args.mirror_dir)], args.cores)
    for name, ph in (("without the data sets", bare), ("with the data sets", full)):
        print(f"\n{name}: exit {ph['code']}, {ph['wall']:.0f} s wall ({ph['log']})")
        for line in ph["said"]:
            print(f"  said: {line}")
        print(f"  {ph['fits'] or 'fit jobs: not printed'}")
        print(f"  report's first line: {ph['first'] or '(no report)'}")
        others = [m for m in re.findall(r"(\w+) \d+", ph["fitted"]) if m != METHOD]
        if ph["code"] != 0 or not ph["first"] or others:
            failed = True
            print(f"  FAIL: exit {ph['code']}; fits of other methods: {others or 'none'}")
    if not any(ln.startswith("not here") for ln in bare["said"]):
        failed = True
        print("FAIL: without the data sets, the command did not say which are missing")
    print(
        f"\nufs compare of a millisecond method, {args.cores} cores: {bare['wall']:.0f} s on the "
        f"data sets a bare clone has, {full['wall']:.0f} s on all the archive's (commit {commit})"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
