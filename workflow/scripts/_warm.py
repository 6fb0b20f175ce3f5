"""Warm workers: a workflow job runs in a process forked from a warm server.

Every job of the workflow is a ``script:`` that Snakemake runs in a fresh Python process;
importing scikit-learn (for the estimators' base class), SciPy and pandas costs ~1.2 CPU-s
before the job does anything, and most jobs of a small run do far less work than that.
So a job's process (the *client*) hands its script to a *server* that has imported those
libraries once and forks a child per job:

* The *client* hands the job over. On a local run it is Snakemake's own process
  (:func:`install_dispatch`, from the Snakefile's ``onstart`` handler): where Snakemake
  would start ``python <script>``, a thread of its sends the script to the server, with
  what that process would have had (directory, environment, ``sys.path``, ``argv``,
  umask, CPUs, standard streams: :func:`dispatch`), and waits; no Python process per
  job, which cost ~0.08 CPU-s each (start-up, and the script's preamble importing
  Snakemake only to hand the job over). Otherwise (a job with its own conda environment
  or container, another Snakemake, a run that is not local) the client is the process
  Snakemake started: :func:`delegate`, called first thing by ``_job.setup``, connects to
  the server through a Unix socket, passes its stdin, stdout and stderr (the file
  descriptors themselves) and sends its working directory, its environment,
  ``sys.path``, ``sys.argv`` and the script Snakemake generated (preamble with the
  pickled ``snakemake`` object, then the script), waits, and exits with the job's exit
  code. Stopping the client (Ctrl-C, ``snakemake`` stopping a job, SIGKILL of either
  client) closes the socket, and the child kills itself: a job never outlives its
  client.
* The child, forked from the server, takes the client's descriptors, directory,
  environment, ``sys.path``, umask and CPU affinity, and runs the script as ``__main__``,
  exactly as Python would (tracebacks to stderr, exit code from ``SystemExit``); ``_job.setup`` then runs the
  job's usual set-up (log file, thread limits). It reports its exit code and CPU time.
* The server imports the third-party libraries (:data:`PRELOAD`) and then the project's
  modules every job needs (:data:`PROJECT_PRELOAD`), from the checkout the client's job
  would import them from (:func:`project_stamp`: the ``ufs`` folder ``importlib`` finds
  on the client's ``sys.path``, and the paths, sizes and modification times of its
  files). The stamp is part of the server's key, so an edited module is always the one
  that runs: a job started after the edit gets another server (the old one leaves when
  idle). A project that changed while the server imported it, or that fails to import,
  is dropped again: the children then import it fresh, as a cold job would. Importing the
  project took ~0.13 CPU-s of every fit and evaluate job (all 30 method modules register
  when the first is asked for). One server per environment and checkout state
  (:func:`server_key`: interpreter, installed packages, ``PYTHONPATH``, thread and library
  variables read at import, the project stamp, and what a child inherits but cannot undo:
  priority (``nice``) and resource limits); it exits after :data:`IDLE_SECONDS` without
  jobs.

The compute record stays whole: Snakemake's benchmark file of a job measures the client
process only (and only the wall time when Snakemake's own process handed the job over),
so the client writes the child's CPU seconds beside the job's log (``<log>.warm.json``,
read with the benchmark file by ``ufs.report.benchmark_report.read_compute`` and archived
with it).

Off (every job in its own cold process, as before) when ``jobs.warm_workers`` is false,
when ``UFS_WARM_WORKERS=0``, on a SLURM node (``SLURM_JOB_ID``: a job there is its own
allocation, and a server would not outlive it), off Linux (``fork`` after importing
BLAS-backed libraries is not safe on macOS), or when the socket folder is not private
(owner and mode 0700 checked). If the server cannot start, the job runs cold and says so
in its log. Standard library only: the client must start fast.
"""

from __future__ import annotations

import atexit
import builtins
import gc
import hashlib
import json
import os
import re
import resource
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
import traceback
import types
from pathlib import Path

#: modules the server imports once; a module missing here is skipped
PRELOAD = (
    "numpy",
    "scipy.linalg",
    "scipy.sparse",
    "scipy.sparse.csgraph",
    "scipy.sparse.linalg",
    "scipy.stats",
    "scipy.optimize",
    "pandas",
    "sklearn.base",
    "sklearn.cluster",
    "sklearn.metrics",
    "sklearn.utils.validation",
    "threadpoolctl",
    "yaml",
    "jsonschema",
    "matplotlib",
    # the figure jobs' drawing and writing (~0.4 CPU-s a job when each child imported them:
    # pyplot, the PNG and PDF backends, and fontTools, which the PDF backend subsets fonts
    # with)
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_pdf",
    "mlflow",
    # the MLflow jobs' SQLite store, imported lazily by MLflow (~0.6 CPU-s a job): the store (with SQLAlchemy and Alembic's schema check), and what it imports
    # later, when it opens a SQLite database and when it creates one
    "mlflow.store.tracking.sqlalchemy_store",
    "mlflow.store.workspace_aware_mixin",
    "sqlalchemy.dialects.sqlite",
    "alembic.command",
    "alembic.config",
    "pyarrow.pandas_compat",  # pandas' Arrow-backed strings, converted by every table
    "snakemake.iocontainers",
    "snakemake.logging",
    "snakemake.script",
)
#: the project's modules the server imports after :data:`PRELOAD`, from the client's
#: checkout (:func:`project_stamp`): what the workflow's scripts import
PROJECT = "ufs"
PROJECT_PRELOAD = (
    "ufs.methods",
    "ufs.pipeline.steps",
    "ufs.pipeline.data_steps",
    "ufs.evaluation",
    "ufs.report.aggregate",
    "ufs.report.figures",
    "ufs.report.latex",
    "ufs.report.html",
    "ufs.tracking",
)
#: the server exits after this many seconds without a job (``UFS_WARM_IDLE``)
IDLE_SECONDS = 30.0
#: how long a client waits for a server it started (the preload takes a few seconds)
START_SECONDS = 60.0
#: environment variables read when the preloaded libraries are imported: a different
#: value needs a different server
_IMPORT_ENV = (
    "PYTHON",
    "OMP_",
    "OPENBLAS_",
    "MKL_",
    "BLIS_",
    "GOTO",
    "VECLIB_",
    "NUMEXPR_",
    "NPY_",
    "MPL",
    "LD_",
    "UFS_",  # the project's, read at import (``UFS_DATA_CACHE``)
    "HOME",  # ``~`` expanded at import
)
#: what importing the project sets in an environment of the key's variables only
#: (``os.environ.setdefault`` at import): set again, the same way, in each child, whose
#: environment is its client's (:func:`preload_project`)
_PROJECT_ENV: dict[str, str] = {}
#: resource limits a child inherits from the server (``ulimit``): part of the key
_RLIMITS = tuple(
    n
    for n in (
        "RLIMIT_AS",
        "RLIMIT_DATA",
        "RLIMIT_CPU",
        "RLIMIT_FSIZE",
        "RLIMIT_NOFILE",
        "RLIMIT_STACK",
        "RLIMIT_CORE",
        "RLIMIT_NPROC",
        "RLIMIT_MEMLOCK",
    )
    if hasattr(resource, n)
)
CHILD_ENV = "UFS_WARM_CHILD"
_HEADER = struct.Struct("!Q")


def enabled(config: dict | None) -> bool:
    """Whether this job process should hand its script to a warm server."""
    env = os.environ.get("UFS_WARM_WORKERS", "").strip().lower()
    if os.environ.get(CHILD_ENV) or env in ("0", "false", "no", "off"):
        return False
    if sys.platform != "linux" or "SLURM_JOB_ID" in os.environ:
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    return bool(((config or {}).get("jobs") or {}).get("warm_workers", True))


def socket_dir(env: dict[str, str] | None = None) -> Path:
    """The private folder of this user's servers (``UFS_WARM_DIR``, else
    ``$XDG_RUNTIME_DIR/ufs-warm``, else ``/tmp/ufs-warm-<uid>``), from ``env`` (default
    this process's environment)."""
    env = os.environ if env is None else env
    if env.get("UFS_WARM_DIR"):
        return Path(env["UFS_WARM_DIR"])
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "ufs-warm"
    return Path("/tmp") / f"ufs-warm-{os.getuid()}"


def private_dir(path: Path) -> Path:
    """``path``, created 0700 if absent; an error unless it is a real folder owned by this
    user that nobody else can enter (another user's socket would run our jobs' code)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise PermissionError(f"{path} is not a folder private to this user (mode 0700)")
    return path


def project_stamp(search_path: list[str] | None = None) -> tuple[str, str] | None:
    """The ``ufs`` package a job of this process would import (its folder, as the import
    system finds it on this ``sys.path``, or on ``search_path`` for a job of another
    process, without importing it) and a digest of the relative path, size and
    modification time of every file in it (``__pycache__`` aside); ``None`` when there is
    none."""
    try:
        spec = _find_spec(PROJECT, search_path)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    if len(locations) != 1 or not os.path.isdir(locations[0]):
        return None
    root = os.path.realpath(locations[0])
    return root, _tree_digest(root)


def _find_spec(name: str, search_path: list[str] | None):
    """``importlib.util.find_spec(name)`` as a process whose ``sys.path`` is
    ``search_path`` would find it: the finders of ``sys.meta_path`` in order, the path
    finder searching ``search_path`` (the others, e.g. an editable install's, need none)."""
    import importlib.util
    from importlib.machinery import PathFinder

    if search_path is None:
        return importlib.util.find_spec(name)
    for finder in sys.meta_path:
        if finder is PathFinder:
            spec = PathFinder.find_spec(name, search_path)
        elif hasattr(finder, "find_spec"):
            spec = finder.find_spec(name, None)
        else:
            continue
        if spec is not None:
            return spec
    return None


def _tree_digest(root: str) -> str:
    h = hashlib.sha256(root.encode())
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            full = os.path.join(folder, name)
            st = os.stat(full)
            h.update(f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


def server_key(
    project: tuple[str, str] | None = None,
    search_path: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """What the preloaded modules depend on: the interpreter, the installed packages (the
    site-packages folders' modification times change on install and removal), the
    preload lists, this file, the environment variables read at import, and the
    project's checkout and the state of its files (``project``, :func:`project_stamp`).
    ``search_path`` and ``env``: the job's, when it is not this process's own."""
    parts = [sys.executable, sys.version, sys.prefix, repr(PRELOAD), repr(PROJECT_PRELOAD)]
    parts.append(repr(project))
    parts.append(hashlib.sha256(Path(__file__).read_bytes()).hexdigest())
    for entry in dict.fromkeys(sys.path if search_path is None else search_path):
        if entry.endswith(("site-packages", "dist-packages")) and os.path.isdir(entry):
            parts.append(f"{entry}:{os.stat(entry).st_mtime_ns}")
    env = os.environ if env is None else env
    parts += sorted(f"{k}={v}" for k, v in env.items() if k.startswith(_IMPORT_ENV))
    # what a forked child inherits and could not change back: its priority and its limits
    parts.append(f"nice={os.getpriority(os.PRIO_PROCESS, 0)}")
    parts += [f"{name}={resource.getrlimit(getattr(resource, name))}" for name in _RLIMITS]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def socket_path(
    project: tuple[str, str] | None = None,
    search_path: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Path:
    return private_dir(socket_dir(env)) / f"{server_key(project, search_path, env)}.sock"


# ---------------------------------------------------------------- the client


def _send(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    payload = json.dumps(message).encode()
    if fds:
        socket.send_fds(sock, [_HEADER.pack(len(payload))], fds)
    else:
        sock.sendall(_HEADER.pack(len(payload)))
    sock.sendall(payload)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket, with_fds: int = 0) -> tuple[dict, list[int]]:
    if with_fds:
        head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, with_fds)
        if len(head) < _HEADER.size:
            head += _recv_exact(sock, _HEADER.size - len(head))
    else:
        head, fds = _recv_exact(sock, _HEADER.size), []
    (size,) = _HEADER.unpack(head)
    return json.loads(_recv_exact(sock, size)), list(fds)


def connect(
    path: Path | None = None,
    *,
    start: bool = True,
    project: tuple[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> socket.socket:
    """A connection to the server at ``path`` (default: the one of this environment and
    ``project``, which a server it starts preloads), started if absent (and ``start``);
    ``OSError`` if it cannot be reached within :data:`START_SECONDS`. ``env``: the job's
    environment, when it is not this process's own (:func:`dispatch`, which gives the
    ``path`` of the job's server); a server started runs in it."""
    path = path or socket_path(project, env=env)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        return sock
    except (FileNotFoundError, ConnectionRefusedError):
        if not start:
            sock.close()
            raise
    sock.close()
    log = open(path.with_suffix(".log"), "ab")  # noqa: SIM115
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != CHILD_ENV}
    server = subprocess.Popen(
        [sys.executable, __file__, "serve", str(path), *(project or ())],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env=env,
        start_new_session=True,
        close_fds=True,
    )
    log.close()
    deadline = time.monotonic() + START_SECONDS
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if server.poll():  # 0: another server of this key holds the lock, wait for it
                raise OSError(
                    f"the warm server could not start (exit {server.returncode}; "
                    f"{path.with_suffix('.log')})"
                ) from None
            if time.monotonic() > deadline:
                raise OSError(f"no warm server at {path} after {START_SECONDS:.0f} s") from None
            time.sleep(0.05)


def _holds_ufs() -> bool:
    """Whether this process has imported the project (a server must not: see above)."""
    return any(m == "ufs" or m.startswith("ufs.") for m in sys.modules)


def _sidecar(log: str | None) -> Path | None:
    return Path(f"{os.path.splitext(log)[0]}.warm.json") if log else None


def delegate(config: dict | None, log: str | None = None) -> None:
    """In a job's own process: run this script in a warm child and exit with its code.
    Returns (and the job runs here, cold) when warm workers are off or unavailable."""
    if not enabled(config):
        return
    main = sys.modules["__main__"]
    script = getattr(main, "__real_file__", None) or getattr(main, "__file__", None)
    if not script or not os.path.isfile(script):
        return
    if _holds_ufs():
        # imported before the script ran (a sitecustomize, say): a server started in this
        # environment would hold the project's code, and its children that copy
        print(
            "ufs warm workers: ufs imported at start-up; this job runs in its own process",
            file=sys.stderr,
        )
        return
    try:
        sock = connect(project=project_stamp())
    except OSError as exc:
        print(f"ufs warm workers: {exc}; this job runs in its own process", file=sys.stderr)
        return
    start = resource_cpu()
    with sock:
        result = run_remote(
            sock,
            {
                "op": "run",
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "path": list(sys.path),
                "argv": list(sys.argv),
                "file": script,
                "source": Path(script).read_text(),
                "umask": _umask(),
                "cpus": sorted(os.sched_getaffinity(0)),
            },
        )
    code = finish(result, log, resource_cpu() - start, "process")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_remote(sock: socket.socket, request: dict, fds: tuple[int, ...] = (0, 1, 2)) -> dict | None:
    """Send the job ``request`` with the standard streams ``fds``; the child's report
    (``exit``, ``cpu_seconds``, ``pid``), or ``None`` when it ended without one."""
    _send(sock, request, fds=list(fds))
    try:
        return _recv(sock)[0]
    except (ConnectionError, OSError, ValueError):
        return None


def finish(result: dict | None, log: str | None, client_cpu: float, client: str) -> int:
    """The job's exit code from the child's report; its CPU recorded beside the job's log
    (``<log>.warm.json``: the child's CPU, the CPU its ``client`` spent handing it over:
    ``"process"``, a process Snakemake started, or ``"snakemake"``, Snakemake's own
    process, :func:`dispatch`)."""
    if result is None:
        print(
            "ufs warm workers: the job's process ended without reporting (killed by a "
            "signal, or out of memory)",
            file=sys.stderr,
        )
        return 1
    side = _sidecar(log)
    if side is not None and side.parent.is_dir():
        record = {
            "cpu_seconds": round(result["cpu_seconds"], 3),
            "client_cpu_seconds": round(client_cpu, 3),
            "client": client,
            "pid": result["pid"],
        }
        tmp = side.with_name(f".{side.name}.tmp")
        tmp.write_text(json.dumps(record) + "\n")
        os.replace(tmp, side)
    return int(result["exit"])


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def drop_sidecar(log: str | None) -> None:
    """A job that runs cold (not in a warm child) removes the warm record of an earlier
    run of it."""
    if os.environ.get(CHILD_ENV):
        return
    side = _sidecar(log)
    if side is not None and side.exists():
        side.unlink()


def resource_cpu(who: int | None = None) -> float:
    r = resource.getrusage(resource.RUSAGE_SELF if who is None else who)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------- in Snakemake's process

#: the start of the preamble Snakemake writes before a ``script:``'s code: the folders it
#: adds to ``sys.path`` (Snakemake 8 and 9)
_PREAMBLE = re.compile(r"^import sys;\s*sys\.path\.extend\((\[[^\n]*?\])\);", re.M)
#: what ``snakemake.shell`` sets in a job's environment: the thread counts (from the job's
#: ``threads``) and the temporary folder (its ``tmpdir`` resource)
_THREAD_ENV = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
_TMP_ENV = ("TMPDIR", "TMP", "TEMPDIR", "TEMP")
_fresh_paths: dict[tuple, list[str] | None] = {}
#: servers that could not be started in this run: their jobs run as Snakemake runs them
_unreachable: set[Path] = set()
_live: set[_Handle] = set()
_live_lock = threading.Lock()


class _Handle:
    """A dispatched job in Snakemake's table of running processes (``shell._processes``)
    and in :data:`_live`: stopping it closes the job's connection, and the child, seeing
    it closed, kills itself (as it does when a client process dies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def kill(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    terminate = kill


def dispatch_problem(workflow) -> str | None:
    """Why :func:`install_dispatch` cannot hand jobs over in this Snakemake (the objects it
    replaces or reads are missing: another version), or None when they are all there:
    ``snakemake.script.PythonScript.execute_script``, the scheduler's executor's
    ``cancel`` and ``snakemake.shell``'s table of running processes."""
    try:
        from snakemake.script import PythonScript
        from snakemake.shell import shell

        PythonScript.execute_script  # noqa: B018
        workflow.scheduler._executor.cancel  # noqa: B018
        shell._processes, shell._lock  # noqa: B018 - the table a killed job is found in
    except (ImportError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def install_dispatch(workflow, config: dict | None) -> bool:
    """On a local run with warm workers on (:func:`enabled`), make Snakemake hand each
    ``script:`` job to a warm child itself, from its own process, instead of starting a
    Python process that imports Snakemake only to hand the job over (the client,
    :func:`delegate`: ~0.08 CPU-s a job, 19 CPU-s of the default run's 231). Called from
    the Snakefile's ``onstart`` handler. The job runs exactly as a client would have run
    it (:func:`dispatch`); a job that needs its own environment (conda, a container,
    environment modules, a shadow folder) and any job that cannot be handed over run as
    Snakemake runs them. Stopping Snakemake (Ctrl-C: its executor's ``cancel``; a job
    killed through ``snakemake.shell``) stops the dispatched jobs. Does nothing (False)
    off a local run, with warm workers off, or when Snakemake's objects do not look as
    expected (another Snakemake version: :func:`dispatch_problem` says what is missing,
    and the Snakefile warns)."""
    if not enabled(config) or not getattr(workflow, "local_exec", False):
        return False
    if dispatch_problem(workflow) is not None:
        return False
    from snakemake.script import PythonScript
    from snakemake.shell import shell

    executor = workflow.scheduler._executor
    cancel = executor.cancel
    original = getattr(PythonScript.execute_script, "ufs_original", PythonScript.execute_script)

    def execute_script(self, fname, edit=False):
        own_env = edit or self.conda_env or self.container_img or self.env_modules
        if own_env or self.shadow_dir or not dispatch(self, fname, shell):
            return original(self, fname, edit=edit)

    execute_script.ufs_original = original
    PythonScript.execute_script = execute_script

    def cancel_jobs():
        with _live_lock:
            handles = list(_live)
        for handle in handles:
            handle.kill()
        return cancel()

    executor.cancel = cancel_jobs
    return True


def job_env(job) -> dict[str, str]:
    """The environment ``snakemake.shell`` gives the process of the job ``job`` (a
    ``snakemake.script.ScriptBase``): this one, with the job's thread counts and
    temporary folder."""
    env = dict(os.environ)
    env.update(dict.fromkeys(_THREAD_ENV, str(job.threads)))
    tmp = (job.resources or {}).get("tmpdir")
    if tmp:
        env.update(dict.fromkeys(_TMP_ENV, str(tmp)))
    return env


def fresh_path(env: dict[str, str]) -> list[str] | None:
    """``sys.path`` of ``python <script>`` in ``env``, the script's folder aside (asked of
    the interpreter once per value of the variables it depends on); None if it fails."""
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") or k == "HOME"))
    if key not in _fresh_paths:
        try:
            out = subprocess.run(
                [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
            _fresh_paths[key] = [str(p) for p in json.loads(out)]
        except (OSError, subprocess.SubprocessError, ValueError):
            _fresh_paths[key] = None
    return _fresh_paths[key]


def _umask_of_process() -> int:
    """This process's umask, read without setting it (other threads create files)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return _umask()


def dispatch(job, fname: str, shell) -> bool:
    """Run the script Snakemake wrote at ``fname`` for ``job`` (a
    ``snakemake.script.PythonScript``) in a warm child, from Snakemake's process, as
    ``python <fname>`` would run it: the same directory, environment (:func:`job_env`),
    ``sys.path`` (:func:`fresh_path`, then the preamble's), ``argv``, umask, CPUs and
    standard streams; the project's server found as that process would find it. Returns
    False, having run nothing, when it cannot (the preamble is not as expected, no
    server): Snakemake then runs the job itself. A job that fails raises
    ``subprocess.CalledProcessError``, as ``snakemake.shell`` does; its wall time goes
    to the benchmark record (its CPU to ``<log>.warm.json``, :func:`finish`)."""
    import ast

    try:
        source = Path(fname).read_text()
        m = _PREAMBLE.search(source, 0, 100_000)
        added = [str(p) for p in ast.literal_eval(m.group(1))] if m else None
    except (OSError, ValueError, SyntaxError):
        added = None
    env = job_env(job)
    base = fresh_path(env)
    if added is None or base is None:
        return False
    search = [os.path.dirname(os.path.abspath(fname)), *base]
    project = project_stamp(search + added)
    try:
        where = socket_path(project, search + added, env)
    except OSError as exc:  # the socket folder is not private
        print(f"ufs warm workers: {exc}; this job runs in its own process", file=sys.stderr)
        return False
    if where in _unreachable:
        return False
    try:
        sock = connect(where, project=project, env=env)
    except OSError as exc:
        _unreachable.add(where)
        print(
            f"ufs warm workers: {exc}; the jobs of this environment run in their own process",
            file=sys.stderr,
        )
        return False
    request = {
        "op": "run",
        "cwd": os.getcwd(),
        "env": env,
        "path": search,
        "argv": [fname],
        "file": fname,
        "source": source,
        "umask": _umask_of_process(),
        "cpus": sorted(os.sched_getaffinity(0)),
    }
    handle = _Handle(sock)
    with _live_lock:
        _live.add(handle)
    if job.jobid is not None:
        with shell._lock:
            shell._processes[job.jobid] = handle
    start, cpu = time.time(), time.thread_time()
    try:
        with sock:
            result = run_remote(sock, request)
    finally:
        with _live_lock:
            _live.discard(handle)
        if job.jobid is not None:
            with shell._lock:
                shell._processes.pop(job.jobid, None)
    log = str(job.log[0]) if job.log else None
    code = finish(result, log, time.thread_time() - cpu, "snakemake")
    if job.bench_record is not None:
        # the wall time; CPU and memory were not sampled (no process of Snakemake's ran
        # the job), which the record says as for a job that ended before its first sample
        job.bench_record.running_time = time.time() - start
        job.bench_record.process_gone = True
    if code:
        raise subprocess.CalledProcessError(code, f"{sys.executable} {fname}")
    return True


# ---------------------------------------------------------------- the child


def _watch(conn: socket.socket, done: threading.Event) -> None:
    """The client's end closing means the job was stopped: stop with it."""
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass
    if not done.is_set():
        os.kill(os.getpid(), signal.SIGKILL)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """The forked child: become the client's process, run its script, report, exit."""
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    gc.enable()  # off in the server (see serve); the server's objects stay frozen
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    # the standard streams on the client's descriptors (``sys.__stderr__`` too: a job may
    # write to the console past its log)
    sys.stdin = sys.__stdin__ = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
        2, "w", buffering=1, closefd=False, errors="backslashreplace"
    )
    os.umask(request["umask"])
    os.sched_setaffinity(0, request["cpus"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[CHILD_ENV] = "1"
    for name, value in _PROJECT_ENV.items():  # as the project's import would have set them
        os.environ.setdefault(name, value)
    sys.path[:] = request["path"]
    sys.argv[:] = request["argv"]
    if "numpy" in sys.modules:  # a fresh process's legacy global RNG is seeded from the OS
        sys.modules["numpy"].random.seed()
    if "tempfile" in sys.modules:  # found again from the client's TMPDIR, if a library
        sys.modules["tempfile"].tempdir = None  # asked for it while the server imported
    done = threading.Event()
    threading.Thread(target=_watch, args=(conn, done), daemon=True).start()
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=request["file"], __builtins__=builtins)
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(request["source"], request["file"], "exec"), main.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001 - printed as Python prints an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    cpu = resource_cpu() + resource_cpu(resource.RUSAGE_CHILDREN)
    done.set()
    try:
        _send(conn, {"exit": code, "cpu_seconds": cpu, "pid": os.getpid()})
    except OSError:
        pass
    os._exit(code)


# ---------------------------------------------------------------- the server


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _stats(jobs: int, children: set[int]) -> dict:
    return {
        "pid": os.getpid(),
        "jobs": jobs,
        "running": len(children),
        "cpu_seconds": resource_cpu(),
        "children_cpu_seconds": resource_cpu(resource.RUSAGE_CHILDREN),
        "modules": sorted(sys.modules),
    }


def _drop_project() -> None:
    for name in [m for m in sys.modules if m == PROJECT or m.startswith(PROJECT + ".")]:
        del sys.modules[name]


def preload_project(root: str, stamp: str) -> str:
    """Import :data:`PROJECT_PRELOAD` from the package folder ``root`` (whatever else is on
    ``sys.path``), fill the method registry's caches of source digests and pay the
    libraries' one-time costs (``ufs.pipeline.warm_up``); what happened,
    in a sentence for the server's log. Nothing stays imported when an import fails or
    when the folder's files no longer match ``stamp`` afterwards (an edit while importing):
    the children then import the project fresh.

    The project is imported with only the variables of the server's key in the environment
    (:data:`_IMPORT_ENV`: the others differ from client to client), so every variable its
    import sets is recorded (:data:`_PROJECT_ENV`), also one this server's first client
    happened to have: each child then sets them as a cold import of the project would, on
    its client's environment."""
    import importlib
    import importlib.util

    init = os.path.join(root, "__init__.py")
    before = dict(os.environ)
    keyed = {k: v for k, v in before.items() if k.startswith(_IMPORT_ENV)}
    os.environ.clear()
    os.environ.update(keyed)
    try:
        spec = importlib.util.spec_from_file_location(
            PROJECT, init, submodule_search_locations=[root]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[PROJECT] = module
        spec.loader.exec_module(module)
        for name in PROJECT_PRELOAD:
            importlib.import_module(name)
        registry = sys.modules.get(f"{PROJECT}.registry")
        if registry is not None:  # the digests a fit job records (cached by mtime)
            for method in registry.available_methods():
                registry.source_hash(method)
        warm_up = sys.modules.get(f"{PROJECT}.pipeline.warm_up")
        # narwhals' plugin list, read once for every child; not the k-means warm-up: its
        # cost in a child is the pages it copies (paid there anyway), and the server runs no
        # OpenMP code before it forks
        if warm_up is not None:
            warm_up.warm_up()
    except Exception as exc:  # noqa: BLE001 - the children will meet it and report it
        _drop_project()
        return f"project not preloaded ({type(exc).__name__}: {exc}); children import it"
    finally:
        set_at_import = {k: v for k, v in os.environ.items() if keyed.get(k) != v}
        os.environ.clear()
        os.environ.update(before)
    if _tree_digest(root) != stamp:
        _drop_project()
        return "project changed while it was imported; children import it"
    _PROJECT_ENV.update(set_at_import)
    return f"project preloaded from {root}"


def _warm_thread_limits() -> None:
    """Scan the loaded libraries for thread pools once, as every job does first
    (``threadpool_limits``, ``_job.setup``): threadpoolctl caches the resolved path of
    every loaded library (``_realpath``, some 300 here), so a child's scan then takes
    ~4 ms instead of ~15. The child still scans, so a library it loads itself
    is limited too."""
    try:
        from threadpoolctl import ThreadpoolController

        ThreadpoolController()
    except Exception as exc:  # noqa: BLE001 - a job then pays the first scan itself
        print(f"threadpoolctl: {type(exc).__name__}: {exc}", file=sys.stderr)


def serve(path: Path, idle: float | None = None, project: tuple[str, str] | None = None) -> None:
    """Preload (the libraries, then ``project``: :func:`preload_project`), listen on
    ``path`` and fork a child per job until idle (or asked to shut down). On leaving, the
    socket is removed and the lock released first, so a new client starts a new server,
    and connections already queued are still served."""
    import fcntl
    import importlib
    import select

    idle = float(os.environ.get("UFS_WARM_IDLE", idle or IDLE_SECONDS))
    lock = open(path.with_suffix(".lock"), "w")  # noqa: SIM115
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server of this key is starting or running
    if _holds_ufs():  # a sitecustomize, say: before the preload, so that this is quick
        print(
            "ufs imported at start-up: children must import it fresh; not serving", file=sys.stderr
        )
        sys.exit(3)
    t0 = time.monotonic()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a library not installed is not preloaded
            print(f"preload {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    said = preload_project(*project) if project else "no project to preload"
    _warm_thread_limits()
    # The children share the imports' memory copy-on-write. A garbage collection in a
    # child would write to every object it scans (its reference counts of the collection)
    # and copy those pages: half a fit job's start-up CPU (0.30 → 0.14 s, 256 000 objects).
    # So, as the gc module's documentation advises: no collection in the server, every
    # object frozen (never scanned) before a fork, collection on again in the child; the
    # few objects the server makes between forks are collected by hand before each fork.
    gc.disable()
    if path.exists():
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(64)
    print(
        f"{time.ctime()} server {os.getpid()} ready in {time.monotonic() - t0:.1f} s; {said}",
        flush=True,
    )
    children: set[int] = set()
    jobs = 0
    last = time.monotonic()
    leaving = False
    waiting: socket.socket | None = None

    def reap() -> None:
        nonlocal last
        while children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                return
            if pid == 0:
                return
            children.discard(pid)
            last = time.monotonic()

    while True:
        reap()
        if not leaving and (
            waiting is not None or (not children and time.monotonic() - last > idle)
        ):
            leaving = True
            path.unlink(missing_ok=True)
            lock.close()
        ready, _, _ = select.select([listener], [], [], 0 if leaving else 0.2)
        if not ready:
            if leaving and not children:
                break
            if leaving:
                time.sleep(0.05)
            continue
        conn, _ = listener.accept()
        last = time.monotonic()
        try:
            if _peer_uid(conn) != os.getuid():
                conn.close()
                continue
            conn.settimeout(30)
            request, fds = _recv(conn, with_fds=3)
            conn.settimeout(None)
        except (OSError, ValueError, ConnectionError):
            conn.close()
            continue
        op = request.get("op")
        if op == "run" and len(fds) == 3:
            gc.collect()  # the server's own cycles since the last fork (cheap: frozen are skipped)
            gc.freeze()
            pid = os.fork()
            if pid == 0:
                listener.close()
                if not lock.closed:
                    lock.close()
                run_child(conn, request, fds)
            children.add(pid)
            jobs += 1
        elif op == "stats":
            _send(conn, _stats(jobs, children))
        elif op == "shutdown" and waiting is None:
            waiting = conn  # answered once the running jobs have ended
        for fd in fds:
            os.close(fd)
        if conn is not waiting:
            conn.close()
    listener.close()
    if waiting is not None:
        with waiting:
            _send(waiting, _stats(jobs, children))
    print(f"{time.ctime()} server {os.getpid()} exits after {jobs} jobs", flush=True)


def request(op: str, path: Path | None = None) -> dict:
    """``stats`` or ``shutdown`` of the running server (its CPU, its children's CPU once
    they ended, the jobs it ran, its modules); ``OSError`` if none runs."""
    with connect(path, start=False) as sock:
        _send(sock, {"op": op})
        return _recv(sock)[0]


if __name__ == "__main__" and len(sys.argv) in (3, 5) and sys.argv[1] == "serve":
    serve(Path(sys.argv[2]), project=tuple(sys.argv[3:5]) or None)
