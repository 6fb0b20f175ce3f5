"""Kill anywhere: a small benchmark slice with MLflow on, run to the end through SIGKILLs
of Snakemake and all its jobs at random moments (seeded), resumed after each with the
README's commands, then checked against an uninterrupted run of the same config.

One *episode* runs the workflow and then writes the run's archive (``ufs
benchmark-archive``), as one process group, in a fresh folder; the group is killed after a
delay drawn uniformly from [0.5 s, 0.9 T] (T: the uninterrupted episode's wall time), and
resumed with ``snakemake --unlock`` and ``snakemake --cores 2`` (the profile sets
``rerun-incomplete``) and the archive command, each resume again killed at a random
moment, until an episode ends by itself. Episodes follow each other until ``--kills``
kills have landed (a kill lands when the group was still running). A kill can so come
during a fit, a k-means evaluation, an MLflow logging job, a table or figure, the summary,
or the archive write: each is printed with the job Snakemake had started last. (The slice's
fits take milliseconds and store no checkpoint; a kill during a checkpoint's flush is
``tests/test_faults.py``'s.)

At the end of each episode:

* every evaluation of the plan is present once and the result tables equal the
  uninterrupted run's (measured times aside);
* MLflow holds exactly one finished run per setting × h (the uninterrupted run's run keys,
  each once);
* no temporary file (an atomic write's ``.<name>.*``) is left under the results;
* the archive reads back with every member's sha256 verified.

    python benchmarks/kill_anywhere.py [--kills 20] [--seed 0] [--workdir DIR]

Prints one line per kill and per episode; exits 1 on the first failed check.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ufs.pipeline.scheduling import one_blas_thread_env, workflow_command

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"

#: the slice: two data sets, a fit with a checkpoint (DGUFS is not in it: too slow to
#: repeat), a label-tuned grid, a chance reference, MLflow on
CONFIG = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "protocols": ["label_free", "oracle"],
    "evaluation": {"restarts": 3, "reference_draws": 3},
    "stability": {"m": 3},
    "jobs": {"tasks_per_job": 2},
    "mlflow": {"experiment": "kill-anywhere"},
    "datasets": {"wine": {"h": [2, 4, 6]}, "breast_cancer": {"h": [3, 6]}},
    "methods": {
        "all_features": {},
        "random": {},
        "max_variance": {},
        "laplacian_score": {"grid": {"n_neighbors": [3, 5, 7]}},
        "kmeans_ufs": {},
    },
}


def _snakemake(workdir: Path, *extra: str) -> list[str]:
    return workflow_command(SNAKEFILE, workdir / "config.yaml", 2, *extra, directory=workdir)


def _archive_cmd(workdir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ufs.cli",
        "benchmark-archive",
        "--results",
        str(workdir / "results"),
        "--config",
        str(workdir / "config.yaml"),
        "--out",
        str(workdir / "run.tar.xz"),
        "--note",
        "kill-anywhere slice",
    ]


def _episode_cmd(workdir: Path, resume: bool) -> str:
    """The README's commands: (unlock, then) run, then archive — one shell, one group."""
    steps = ([_snakemake(workdir, "--unlock")] if resume else []) + [
        _snakemake(workdir),
        _archive_cmd(workdir),
    ]
    return " && ".join(shlex.join(s) for s in steps)


def start(workdir: Path, resume: bool, log: Path) -> subprocess.Popen:
    out = open(log, "a")  # noqa: SIM115 (closed by the caller through proc.stdout)
    return subprocess.Popen(
        ["/bin/sh", "-c", _episode_cmd(workdir, resume)],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=one_blas_thread_env(),
        cwd=REPO,
        start_new_session=True,  # Snakemake, its jobs and its warm workers: one group
    )


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL every process of the episode's group, and wait until none is left."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    deadline = time.time() + 30
    while _group_alive(proc.pid) and time.time() < deadline:
        time.sleep(0.05)


def last_rule(log: Path) -> str:
    """What the episode was doing (from its log): the message of the job Snakemake had
    started last, the archive write once the workflow had ended, or its start."""
    text = log.read_text(errors="replace") if log.exists() else ""
    if "Complete log" in text or "Nothing to be done" in text:
        return "archive write"
    started = re.findall(r"^Job \d+: (.+)$", text, flags=re.M)  # the rules' messages
    return started[-1][:70] if started else "startup"


def run_episode(workdir: Path, delays, max_delay: float, say=print) -> int:
    """Run one episode in ``workdir`` through kills after the delays drawn from ``delays``
    (a callable giving the next delay), until it ends by itself; returns the kills that
    landed."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    landed, resume = 0, False
    while True:
        log = workdir / f"attempt{landed}.log"
        proc = start(workdir, resume, log)
        delay = delays()
        try:
            code = proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:  # ended before the kill
            if code != 0:
                raise RuntimeError(f"the resumed run failed ({code}); see {log}")
            return landed
        stage = last_rule(log)
        kill_group(proc)
        landed += 1
        say(f"  kill {landed} after {delay:5.1f} s (max {max_delay:.0f} s), during: {stage}")
        resume = True


def _tables(workdir: Path) -> dict:
    import pandas as pd

    out = {}
    for f in sorted((workdir / "results" / "tables").glob("*.csv")):
        if f.name.startswith("."):  # an atomic write's temporary file: check() names it
            continue
        df = pd.read_csv(f).drop(columns=["fit_seconds", "fit_cpu_seconds"], errors="ignore")
        out[f.stem] = df.sort_values(["protocol", "method", "h", "pid"]).reset_index(drop=True)
    return out


def _run_keys(workdir: Path) -> list[tuple[str, str, str]]:
    """(setting, h, result hash) of every finished run: what a run logs, not where."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'results' / 'mlflow.db'}")
    exp = client.get_experiment_by_name(CONFIG["mlflow"]["experiment"])
    runs = client.search_runs(
        [exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=50000
    )
    return [
        (r.data.tags.get("setting_key", ""), r.data.params.get("h", ""), r.data.tags["result_hash"])
        for r in runs
        if r.info.status == "FINISHED" and "ufs.parent" not in r.data.tags
    ]


def check(workdir: Path, reference: Path) -> list[str]:
    """What differs from the uninterrupted run (module docstring); [] when nothing."""
    import pandas as pd

    from ufs.pipeline.archive import ArchiveError, read_archive
    from ufs.pipeline.config import build_plan

    problems = []
    plan = build_plan(CONFIG, warn=False)
    want = {f"{d}/{c}.json" for d in plan.instances for c in plan.chunks(d)}
    ev = workdir / "results" / "evaluations"
    have = sorted(str(p.relative_to(ev)) for p in ev.glob("*/*.json"))
    if set(have) != want or len(have) != len(want):
        problems.append(f"evaluations: {len(have)} on disk, {len(want)} planned")
    ours, ref = _tables(workdir), _tables(reference)
    if ours.keys() != ref.keys():
        problems.append(f"tables: {sorted(ours)} against {sorted(ref)}")
    for k in set(ours) & set(ref):
        try:
            pd.testing.assert_frame_equal(ours[k], ref[k])
        except AssertionError as exc:
            problems.append(f"table {k} differs: {str(exc)[:300]}")
    keys, ref_keys = _run_keys(workdir), _run_keys(reference)
    if sorted(keys) != sorted(set(ref_keys)) or len(keys) != len(set(keys)):
        problems.append(
            f"MLflow: {len(keys)} finished runs ({len(set(keys))} distinct keys), the "
            f"uninterrupted run has {len(set(ref_keys))}"
        )
    temporary = [
        str(p.relative_to(workdir))
        for p in (workdir / "results").rglob(".*")
        if p.is_file() and not p.name.startswith(".snakemake")
    ]
    if temporary:
        problems.append(f"temporary files left: {temporary[:5]}")
    try:
        manifest, _ = read_archive(workdir / "run.tar.xz")
        if len(manifest["files"]) < len(want):
            problems.append(f"archive lists {len(manifest['files'])} members")
    except (ArchiveError, FileNotFoundError) as exc:
        problems.append(f"archive: {exc}")
    return problems


def reference_run(workdir: Path) -> float:
    """The uninterrupted episode; its wall time."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    t0 = time.perf_counter()
    proc = start(workdir, False, workdir / "run.log")
    if proc.wait() != 0:
        raise RuntimeError(f"the uninterrupted run failed; see {workdir / 'run.log'}")
    return time.perf_counter() - t0


def kill_anywhere(kills: int, seed: int, root: Path, say=print) -> dict:
    """Episodes until ``kills`` kills have landed; ``{"kills", "episodes", "reference_s",
    "problems"}`` (``problems``: per failed episode, what differed)."""
    t_ref = reference_run(root / "reference")
    say(f"uninterrupted: {t_ref:.1f} s wall")
    rng = random.Random(seed)
    max_delay = 0.9 * t_ref
    landed, episodes, problems = 0, 0, []
    while landed < kills:
        episodes += 1
        budget = kills - landed
        count = {"n": 0}

        def delays(count=count, budget=budget):  # no more kills than asked for
            count["n"] += 1
            return rng.uniform(0.5, max_delay) if count["n"] <= budget else 3600.0

        work = root / f"episode{episodes}"
        got = run_episode(work, delays, max_delay, say=say)
        landed += got
        found = check(work, root / "reference")
        say(f"episode {episodes}: {got} kill(s), " + ("checks pass" if not found else "FAILED"))
        if found:
            problems.append({"episode": episodes, "problems": found})
            for p in found:
                say(f"  {p}")
            break
    return {"kills": landed, "episodes": episodes, "reference_s": t_ref, "problems": problems}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20, help="kills that land (%(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="the kill moments' seed (%(default)s)")
    ap.add_argument("--workdir", default=None, help="where the episodes run (a temporary folder)")
    args = ap.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="kill-anywhere-"))
    t0 = time.perf_counter()
    done = kill_anywhere(args.kills, args.seed, root)
    print(
        f"{done['kills']} kills in {done['episodes']} episode(s), "
        f"{'every check passed' if not done['problems'] else 'a check FAILED'}; "
        f"{time.perf_counter() - t0:.0f} s in all ({root})"
    )
    return 1 if done["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
