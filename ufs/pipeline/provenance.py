"""Where a result came from: the git commit of the code that computed it.

Recorded by the fit job in its results (not looked up when the results are logged), so
that a run computed at one commit and logged after a later checkout still names the commit
that computed it.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

__all__ = ["git_commit"]

_REPO = Path(__file__).resolve().parents[2]


@functools.cache
def git_commit(repo: str | Path = _REPO) -> str:
    """``<sha>`` of the checkout holding this code, ``<sha>-dirty`` when tracked files
    differ from it, ``""`` when the code is not in a git checkout (an installed package).

    One ``git status`` (``--porcelain=v2 --branch``: the commit on its ``# branch.oid``
    line, a changed tracked file on any other line), run by every fit job: it used to be
    three git processes, ~8 CPU-ms of a job whose fits take ~1 ms."""
    if not Path(repo, ".git").exists():
        return ""  # not a checkout's top folder (an installed package, or inside another one)
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "status",
                "--porcelain=v2",
                "--branch",
                "--untracked-files=no",
            ],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return ""
    sha = next((line.split()[2] for line in out if line.startswith("# branch.oid ")), "")
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
        return ""  # no commit yet ("(initial)")
    dirty = any(line and not line.startswith("#") for line in out)
    return f"{sha}-dirty" if dirty else sha
