"""Warm workers (``workflow/scripts/_warm.py``): a job's script runs in a process
forked from a server that has the libraries imported, and behaves as if it ran in the
client Snakemake started: its streams, directory, environment, exit code, traceback; it
dies with its client; the server holds the project's code of the client's checkout, as its
files are (an edit gets another server); the compute record counts the child's CPU. The workflow tests run with warm workers on (the default) and compare
their results with fixed references, and ``test_workflow`` runs a slice cold as well."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"
sys.path.insert(0, str(SCRIPTS))

import _warm  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="warm workers are Linux-only")

JOB = """
import json, os, sys, time
sys.path.insert(0, {scripts!r})
FIRST = sorted(m for m in sys.modules if m == "ufs" or m.startswith("ufs."))
PRELOADED = "sklearn.base" in sys.modules
import _warm
_warm.delegate({config!r}, {log!r})
print(json.dumps({{"pid": os.getpid(), "cwd": os.getcwd(), "probe": os.environ.get("PROBE"),
                  "ufs_before": FIRST, "preloaded": PRELOADED, "argv": sys.argv[1:],
                  "ufs_file": getattr(sys.modules.get("ufs"), "__file__", None),
                  "value": getattr(sys.modules.get("ufs"), "VALUE", None),
                  "set_at_import": os.environ.get("SET_AT_IMPORT"),
                  "child": os.environ.get("UFS_WARM_CHILD"), "umask": os.umask(0),
                  "cpus": sorted(os.sched_getaffinity(0)),
                  "tmp": __import__("tempfile").gettempdir(),
                  "gc": [__import__("gc").isenabled(), __import__("gc").get_freeze_count()],
                  "threadpool_scanned": "threadpoolctl" in sys.modules and
                      sys.modules["threadpoolctl"]._realpath.cache_info().currsize > 0,
                  "plugins_read": None if "narwhals.plugins" not in sys.modules else
                      sys.modules["narwhals.plugins"]._discover_entrypoints.cache_info().currsize
                      > 0}}),
      flush=True)
print("to stderr", file=sys.stderr)
if os.environ.get("PIDFILE"):
    open(os.environ["PIDFILE"], "w").write(str(os.getpid()))
    time.sleep(60)
if os.environ.get("RAISE"):
    raise ValueError("the job failed here")
sys.exit(int(os.environ.get("CODE", "0")))
"""


@pytest.fixture
def sockets(tmp_path):
    """A private socket folder for this test's server, shut down afterwards."""
    d = tmp_path / "sock"
    yield d
    for sock in d.glob("*.sock") if d.is_dir() else []:
        try:
            _warm.request("shutdown", sock)
        except OSError:
            pass


def _job(tmp_path, sockets, config=None, log=None, **env):
    script = tmp_path / "job.py"
    config = {"jobs": {"warm_workers": True}} if config is None else config
    script.write_text(JOB.format(scripts=str(SCRIPTS), config=config, log=log))
    full = {**os.environ, "UFS_WARM_DIR": str(sockets), **env}
    full.pop("UFS_WARM_WORKERS", None)
    full.pop("SLURM_JOB_ID", None)
    full.update(env)
    return [sys.executable, str(script), "arg1"], full


def _run(tmp_path, sockets, config=None, log=None, umask=0o022, **env):
    cmd, full = _job(tmp_path, sockets, config, log, **env)
    proc = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=umask,
    )
    out, err = proc.communicate(timeout=120)
    return proc.pid, proc.returncode, out, err


def test_a_job_runs_in_a_warm_child_as_in_its_own_process(tmp_path, sockets):
    (tmp_path / "logs").mkdir()
    log = str(tmp_path / "logs" / "job.log")
    pid, code, out, err = _run(
        tmp_path, sockets, log=log, PROBE="x", CODE="3", TMPDIR=str(tmp_path)
    )
    assert code == 3, err
    rec = json.loads(out.splitlines()[0])
    assert rec["pid"] != pid  # the script ran in another process
    # libraries and the project warm: the project from the checkout the client imports
    assert rec["preloaded"] and "ufs.methods" in rec["ufs_before"]
    assert rec["ufs_file"] == str(ROOT / "ufs" / "__init__.py")
    assert rec["cwd"] == str(tmp_path) and rec["probe"] == "x" and rec["argv"] == ["arg1"]
    assert rec["child"] == "1"
    # collection on, the server's objects frozen: a collection in the child does not copy
    # the shared pages of the imports
    assert rec["gc"][0] and rec["gc"][1] > 10_000
    # threadpoolctl's first scan made by the server: a job's own scan is cheap
    assert rec["threadpool_scanned"]
    # and scikit-learn's first feature-name check (narwhals' plugin list, ~10 ms): a job's
    # first fit is not timed with it (ufs.pipeline.warm_up)
    assert rec["plugins_read"] is not False
    assert "to stderr" in err
    side = json.loads((tmp_path / "logs" / "job.warm.json").read_text())
    assert side["pid"] == rec["pid"] and side["cpu_seconds"] > 0
    # a second job: the same server, one more job
    assert rec["umask"] == 0o022 and rec["cpus"] == sorted(os.sched_getaffinity(0))
    assert rec["tmp"] == str(tmp_path)
    # a second job, with another umask: the same server, one more job, its umask
    _, code, out2, _ = _run(tmp_path, sockets, umask=0o027)
    rec2 = json.loads(out2.splitlines()[0])
    assert code == 0 and rec2["pid"] not in (rec["pid"], pid) and rec2["umask"] == 0o027
    assert rec2["tmp"] != str(tmp_path)  # its own TMPDIR, not the server's
    stats = _warm.request("stats", next(sockets.glob("*.sock")))
    assert stats["jobs"] == 2
    assert set(_warm.PROJECT_PRELOAD) <= set(stats["modules"])
    # the figure jobs' drawing and writing too: pyplot, the backends, fontTools,
    # and the MLflow jobs' SQLite store (SQLAlchemy, Alembic)
    drawing = {"matplotlib.pyplot", "matplotlib.backends.backend_pdf", "fontTools.subset"}
    store = {"mlflow.store.tracking.sqlalchemy_store", "sqlalchemy.dialects.sqlite", "alembic"}
    assert drawing | store <= set(stats["modules"])


def _fake_project(tmp_path, init: str, broken: bool = False) -> Path:
    """A package ``ufs`` with the modules the server preloads; ``broken``: one raises."""
    site = tmp_path / "proj"
    for name in ("ufs", *_warm.PROJECT_PRELOAD):
        parts = name.split(".")
        for i in range(1, len(parts)):  # the packages on the way
            pkg = site.joinpath(*parts[:i], "__init__.py")
            pkg.parent.mkdir(parents=True, exist_ok=True)
            if not pkg.exists():
                pkg.write_text("")
        leaf = (
            site.joinpath(*parts, "__init__.py")
            if name == "ufs"
            else site.joinpath(*parts[:-1], parts[-1] + ".py")
        )
        leaf.parent.mkdir(parents=True, exist_ok=True)
        leaf.write_text(init if name == "ufs" else "")
    if broken:
        (site / "ufs" / "evaluation.py").write_text("raise RuntimeError('half-edited')\n")
    return site


def test_an_edited_project_module_is_the_one_that_runs(tmp_path, sockets):
    """The server preloads the project from the client's checkout; an edit changes the
    project's stamp, hence the server: the next job runs the edited code."""
    site = _fake_project(tmp_path, "VALUE = 1\n")
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    rec = json.loads(out.splitlines()[0])
    assert code == 0, err
    assert rec["value"] == 1 and rec["ufs_file"] == str(site / "ufs" / "__init__.py")
    assert "ufs.evaluation" in rec["ufs_before"]  # preloaded, not imported by the job
    init = site / "ufs" / "__init__.py"
    before = init.stat().st_mtime_ns
    init.write_text("VALUE = 2\n")  # same size: the modification time tells
    os.utime(init, ns=(before + 10**9, before + 10**9))
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["value"] == 2
    assert len(list(sockets.glob("*.sock"))) == 2  # the edit got a server of its own


def test_what_the_projects_import_sets_in_the_environment_is_set_in_each_child(tmp_path, sockets):
    """``os.environ.setdefault`` at import (as ``ufs.tracking.client`` sets MLflow's
    defaults): the child takes its client's environment, then the import's defaults."""
    site = _fake_project(tmp_path, "import os\nos.environ.setdefault('SET_AT_IMPORT', 'x')\n")
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    assert code == 0, err
    rec = json.loads(out.splitlines()[0])
    assert "ufs.evaluation" in rec["ufs_before"] and rec["set_at_import"] == "x"
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site), SET_AT_IMPORT="mine")
    assert code == 0 and json.loads(out.splitlines()[0])["set_at_import"] == "mine"


def test_a_default_the_first_client_had_set_still_reaches_the_next_child(tmp_path, sockets):
    """The server is started by a client that has the variable already (so its import
    set nothing); a later client without it gets the import's default all the same, as a
    cold import would give it: the project is imported with the key's variables only."""
    site = _fake_project(tmp_path, "import os\nos.environ.setdefault('SET_AT_IMPORT', 'x')\n")
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site), SET_AT_IMPORT="mine")
    assert code == 0, err
    rec = json.loads(out.splitlines()[0])
    assert "ufs.evaluation" in rec["ufs_before"] and rec["set_at_import"] == "mine"
    _, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["set_at_import"] == "x"
    assert len(list(sockets.glob("*.sock"))) == 1  # the same server


def test_a_project_that_fails_to_import_is_left_to_the_children(tmp_path, sockets):
    """A half-edited module: the server holds no project code, and the job imports it
    itself (and meets the error itself, in its own log, when it needs that module)."""
    site = _fake_project(tmp_path, "VALUE = 1\n", broken=True)
    pid, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    rec = json.loads(out.splitlines()[0])
    assert code == 0 and rec["pid"] != pid, err  # warm, all the same
    assert rec["ufs_before"] == []
    log = next(sockets.glob("*.log")).read_text()
    assert "project not preloaded (RuntimeError: half-edited)" in log


def test_an_exception_prints_its_traceback_and_exits_1(tmp_path, sockets):
    _, code, _, err = _run(tmp_path, sockets, RAISE="1")
    assert code == 1
    assert "Traceback" in err and "ValueError: the job failed here" in err
    assert str(tmp_path / "job.py") in err  # the frame names the script's file


def test_a_killed_client_takes_its_job_with_it(tmp_path, sockets):
    pidfile = tmp_path / "pid"
    cmd, env = _job(tmp_path, sockets, PIDFILE=str(pidfile))
    client = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 90
    while not pidfile.exists() or not pidfile.read_text():
        assert time.time() < deadline and client.poll() is None
        time.sleep(0.05)
    child = int(pidfile.read_text())
    assert child != client.pid
    client.send_signal(signal.SIGKILL)
    client.wait()
    deadline = time.time() + 10
    while (
        Path(f"/proc/{child}").exists()
        and Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
    ):
        assert time.time() < deadline, "the job outlived its client"
        time.sleep(0.05)


@pytest.mark.parametrize(
    "config, env",
    [
        ({"jobs": {"warm_workers": False}}, {}),
        ({"jobs": {"warm_workers": True}}, {"UFS_WARM_WORKERS": "0"}),
        ({"jobs": {"warm_workers": True}}, {"SLURM_JOB_ID": "17"}),
    ],
    ids=["config-off", "env-off", "slurm-node"],
)
def test_off_the_job_runs_in_its_own_process(tmp_path, sockets, config, env):
    (tmp_path / "logs").mkdir()
    pid, code, out, _ = _run(
        tmp_path, sockets, config=config, log=str(tmp_path / "logs" / "job.log"), **env
    )
    assert code == 0 and json.loads(out.splitlines()[0])["pid"] == pid
    assert not sockets.exists() or not list(sockets.glob("*.sock"))


def test_a_job_run_cold_drops_the_warm_record_of_an_earlier_run(tmp_path):
    log = tmp_path / "job.log"
    side = tmp_path / "job.warm.json"
    side.write_text('{"cpu_seconds": 5}')
    code = (
        f"import sys, types; sys.path.insert(0, {str(SCRIPTS)!r}); import _job; "
        f"_job.setup(types.SimpleNamespace(log=[{str(log)!r}], output=[], threads=1, "
        "config={'jobs': {'warm_workers': False}}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert not side.exists() and "job cpu_seconds=" in log.read_text()


def test_a_socket_folder_others_can_enter_is_refused(tmp_path, sockets):
    sockets.mkdir(mode=0o777)
    os.chmod(sockets, 0o777)
    pid, code, out, err = _run(tmp_path, sockets)
    assert code == 0 and json.loads(out.splitlines()[0])["pid"] == pid  # ran cold
    assert "not a folder private to this user" in err
    assert not list(sockets.glob("*.sock"))


def test_ufs_imported_at_start_up_runs_the_job_cold_at_once(tmp_path, sockets):
    """A sitecustomize that imports (and patches) the project, as tests/test_faults.py
    injects a fault: a server would hold that code, so the job runs in its own process."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import ufs\n")
    t0 = time.monotonic()
    pid, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    rec = json.loads(out.splitlines()[0])
    assert code == 0 and rec["pid"] == pid and rec["ufs_before"]
    assert "ufs imported at start-up" in err and time.monotonic() - t0 < 30


def test_a_server_that_cannot_start_runs_the_job_cold_at_once(tmp_path, sockets):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nif 'serve' in sys.argv: sys.exit(5)\n")
    t0 = time.monotonic()
    pid, code, out, err = _run(tmp_path, sockets, PYTHONPATH=str(site))
    assert code == 0 and json.loads(out.splitlines()[0])["pid"] == pid
    assert "the warm server could not start (exit" in err and time.monotonic() - t0 < 30


def test_the_server_leaves_when_idle(tmp_path, sockets):
    _, code, _, _ = _run(tmp_path, sockets, UFS_WARM_IDLE="0.5")
    assert code == 0
    deadline = time.time() + 20
    while list(sockets.glob("*.sock")):
        assert time.time() < deadline, "the idle server did not leave"
        time.sleep(0.1)


def test_what_a_child_cannot_undo_needs_another_server(monkeypatch):
    """Variables read at import, the priority and the resource limits are in the key;
    a variable read when used is not."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    plain = _warm.server_key()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert _warm.server_key() != plain
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    with monkeypatch.context() as m:
        m.setattr(_warm.os, "getpriority", lambda *a: 19)  # a niced client
        assert _warm.server_key() != plain
    with monkeypatch.context() as m:
        m.setattr(_warm.resource, "getrlimit", lambda r: (1 << 30, 1 << 30))  # ulimit -v
        assert _warm.server_key() != plain
    with monkeypatch.context() as m:  # the project's, read when it is imported
        m.setenv("UFS_DATA_CACHE", "/elsewhere")
        assert _warm.server_key() != plain
    assert _warm.server_key(("/a/ufs", "stamp1")) != _warm.server_key(("/a/ufs", "stamp2"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///x.db")  # read when used
    assert _warm.server_key() == plain


def test_the_compute_record_adds_the_warm_workers_cpu(tmp_path):
    from ufs.pipeline.archive import archive_members
    from ufs.report.benchmark_report import read_compute

    for chunk, cpu in (("a.c000", 0.5), ("a.c001", 0.25)):
        tsv = tmp_path / "benchmarks" / "fit" / "d" / f"{chunk}.tsv"
        tsv.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"s": [2.0], "cpu_time": [cpu]}).to_csv(tsv, sep="\t", index=False)
    side = tmp_path / "logs" / "fit" / "d" / "a.c000.warm.json"
    side.parent.mkdir(parents=True)
    side.write_text(json.dumps({"cpu_seconds": 1.5, "client_cpu_seconds": 0.01, "pid": 1}))
    compute = read_compute(tmp_path)
    assert compute.loc["fit", "jobs"] == 2
    assert compute.loc["fit", "cpu_time"] == pytest.approx(0.5 + 1.5 + 0.25)
    assert compute.loc["fit", "s"] == pytest.approx(4.0)
    assert "logs/fit/d/a.c000.warm.json" in archive_members(tmp_path)


@pytest.mark.slow
def test_a_workflow_run_gives_the_same_results_warm_and_cold(tmp_path):
    """The same config run with every job in its own process and in warm workers: equal
    tables (timings aside) and equal selections; only the warm run has worker records."""
    from tests.workflow_helpers import TINY, result_tables, run_snakemake, write_config

    config = {**TINY, "mlflow": {"enabled": False}, "datasets": {"wine": {"h": [2, 4]}}}
    results = {}
    for mode in ("0", "1"):
        wd = tmp_path / f"warm{mode}"
        wd.mkdir()
        cfg = write_config(wd, config)
        os.environ["UFS_WARM_WORKERS"] = mode
        try:
            run_snakemake(wd, cfg)
        finally:
            os.environ.pop("UFS_WARM_WORKERS")
        selections = {
            p.name: [
                (r["h"], r["selected"], r["per_restart"])
                for e in json.loads(p.read_text())["evaluations"]
                for r in e["results"]
            ]
            for p in sorted((wd / "results" / "evaluations" / "wine").glob("*.json"))
        }
        records = sorted((wd / "results" / "logs").rglob("*.warm.json"))
        results[mode] = (result_tables(wd), selections, records)
    cold, warm = results["0"], results["1"]
    assert cold[0].keys() == warm[0].keys() and cold[0]
    for name in cold[0]:
        pd.testing.assert_frame_equal(cold[0][name], warm[0][name])
    assert cold[1] == warm[1] and len(cold[1]) >= 5
    assert not cold[2] and any("fit" in p.parts for p in warm[2])
    # handed over by Snakemake's own process (install_dispatch), not a process per job
    assert {json.loads(p.read_text())["client"] for p in warm[2]} == {"snakemake"}


# -- Snakemake hands script jobs to warm workers itself (install_dispatch) ------------------

TOY_SNAKEFILE = """
import ufs.pipeline.scheduling

onstart:
    ufs.pipeline.scheduling.dispatch_to_warm_workers(workflow, config, {warm!r})

rule all:
    input: "a.json", "b.json"

rule job:
    output: "{{name}}.json"
    log: "logs/{{name}}.log"
    benchmark: "benchmarks/{{name}}.tsv"
    threads: lambda w: 2 if w.name == "b" else 1
    script: "job.py"
"""

TOY_SCRIPT = """
import json, os, sys, time
P0 = sys.path[0]
sys.path.insert(0, {scripts!r})
import _warm
_warm.delegate(snakemake.config, snakemake.log[0])
if os.environ.get("PIDFILE") and snakemake.wildcards.name == "a":
    open(os.environ["PIDFILE"], "w").write(str(os.getpid()))
    time.sleep(60)
if os.environ.get("RAISE") and snakemake.wildcards.name == "b":
    raise ValueError("job b failed here")
json.dump({{"pid": os.getpid(), "child": os.environ.get("UFS_WARM_CHILD"),
           "threads": os.environ.get("OMP_NUM_THREADS"), "argv": sys.argv,
           "cwd": os.getcwd(), "path0": P0, "umask": os.umask(0),
           "ufs_preloaded": "ufs.methods" in sys.modules}}, open(snakemake.output[0], "w"))
"""


def _toy(tmp_path, sockets, **env):
    wd = tmp_path / "toy"
    wd.mkdir()
    (wd / "Snakefile").write_text(TOY_SNAKEFILE.format(warm=str(SCRIPTS / "_warm.py")))
    (wd / "job.py").write_text(TOY_SCRIPT.format(scripts=str(SCRIPTS)))
    full = {**os.environ, "UFS_WARM_DIR": str(sockets), **env}
    full.pop("SLURM_JOB_ID", None)
    if "UFS_WARM_WORKERS" not in env:
        full.pop("UFS_WARM_WORKERS", None)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "-d", str(wd), "-s"]
    return wd, cmd + [str(wd / "Snakefile")], full


def test_snakemake_hands_script_jobs_to_warm_workers_itself(tmp_path, sockets):
    """No Python process per job: the job runs in a warm child started from Snakemake's
    own process, as ``python <script>`` would run it (directory, thread variables, argv,
    sys.path, umask); its record says so; its benchmark file has the wall time."""
    wd, cmd, env = _toy(tmp_path, sockets)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name, threads in (("a", "1"), ("b", "2")):
        rec = json.loads((wd / f"{name}.json").read_text())
        assert rec["child"] == "1" and rec["threads"] == threads and rec["ufs_preloaded"]
        assert rec["cwd"] == str(wd) and rec["umask"] == 0o022
        script = Path(rec["argv"][0])
        assert len(rec["argv"]) == 1 and script.parent == wd / ".snakemake" / "scripts"
        assert rec["path0"] == str(script.parent)
        side = json.loads((wd / "logs" / f"{name}.warm.json").read_text())
        assert side["client"] == "snakemake" and side["pid"] == rec["pid"]
        assert 0 <= side["client_cpu_seconds"] < 0.5
        bench = pd.read_csv(wd / "benchmarks" / f"{name}.tsv", sep="\t")
        assert bench["s"].iloc[0] > 0 and pd.isna(bench["cpu_time"].iloc[0])
    assert "unable to collect" not in proc.stderr


def test_with_warm_workers_off_snakemake_runs_each_job_itself(tmp_path, sockets):
    wd, cmd, env = _toy(tmp_path, sockets, UFS_WARM_WORKERS="0")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((wd / "a.json").read_text())["child"] is None
    assert not list((wd / "logs").glob("*.warm.json"))


def test_a_dispatched_job_that_fails_fails_its_rule(tmp_path, sockets):
    wd, cmd, env = _toy(tmp_path, sockets, RAISE="1")
    proc = subprocess.run(cmd + ["--keep-going"], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode != 0
    assert "ValueError: job b failed here" in proc.stderr
    assert "returned non-zero exit status 1" in proc.stderr
    assert (wd / "a.json").exists() and not (wd / "b.json").exists()


def test_stopping_snakemake_stops_its_dispatched_jobs(tmp_path, sockets):
    """Ctrl-C: Snakemake cancels its jobs, and a dispatched job (not in Snakemake's process
    group, so not reached by the terminal's SIGINT) is stopped with them."""
    pidfile = tmp_path / "pid"
    wd, cmd, env = _toy(tmp_path, sockets, PIDFILE=str(pidfile))
    with open(tmp_path / "snakemake.txt", "w") as out:
        snake = subprocess.Popen(
            cmd,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
            # a background shell (nohup, CI) starts its commands with SIGINT ignored, which
            # they inherit, and Python then leaves it ignored: as at a terminal, here
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    said = lambda: (tmp_path / "snakemake.txt").read_text()[-3000:]  # noqa: E731
    deadline = time.time() + 120
    while not pidfile.exists() or not pidfile.read_text():
        assert time.time() < deadline and snake.poll() is None, said()
        time.sleep(0.05)
    child = int(pidfile.read_text())
    snake.send_signal(signal.SIGINT)
    deadline = time.time() + 45  # the job itself would sleep 60 s
    while (
        Path(f"/proc/{child}").exists()
        and Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
    ):
        assert time.time() < deadline, "the dispatched job outlived Ctrl-C\n" + said()
        time.sleep(0.05)
    assert snake.wait(timeout=45) != 0, said()
    assert "Terminating processes on user request" in said()


def test_a_server_that_cannot_start_is_tried_once_and_the_jobs_run_anyway(tmp_path, sockets):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nif 'serve' in sys.argv: sys.exit(5)\n")
    wd, cmd, env = _toy(tmp_path, sockets, PYTHONPATH=str(site))
    cmd[cmd.index("--cores") + 1] = "1"  # one job at a time, both with one thread: one server
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in "ab":  # each ran in its own process
        assert json.loads((wd / f"{name}.json").read_text())["child"] is None
    said = proc.stdout + proc.stderr
    assert said.count("the jobs of this environment run in their own process") == 1
