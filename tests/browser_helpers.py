"""A real browser on the MLflow UI: ``mlflow server`` on loopback and headless Chromium
(Debian's ``chromium``; ``.ci/run`` installs it). Used by tests/test_mlflow_ui.py and by
benchmarks/mlflow_screenshots.py (the screenshots in docs/img)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

#: flags for a headless Chromium on a machine without network or display (as root)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium() -> str | None:
    """The Chromium executable, or ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mlflow_ui(backend_uri: str, workdir: Path, timeout: float = 240):
    """``mlflow server`` on ``backend_uri`` at a free loopback port; yields its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"  # no GenAI job runner processes
    cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--backend-store-uri", backend_uri, "--workers", "1"]
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "mlflow_ui.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=workdir, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"mlflow server not up after {timeout} s")
            time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def render(
    url: str,
    profile: Path,
    *,
    png: Path | None = None,
    size: tuple[int, int] = (1600, 900),
    budget_ms: int = 20000,
) -> str:
    """The DOM of ``url`` after its scripts ran (``budget_ms`` of virtual time) in headless
    Chromium; with ``png``, also a screenshot of the window."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("no chromium on PATH")
    common = [exe, *CHROMIUM_FLAGS, f"--window-size={size[0]},{size[1]}"]
    common.append(f"--virtual-time-budget={budget_ms}")

    def run(*extra: str, profile_dir: Path) -> str:
        profile_dir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [*common, f"--user-data-dir={profile_dir}", *extra, url],
            capture_output=True,
            text=True,
            timeout=180,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return proc.stdout

    dom = run("--dump-dom", profile_dir=profile / "dom")
    if png is not None:
        run(f"--screenshot={png}", profile_dir=profile / "shot")
    return dom
