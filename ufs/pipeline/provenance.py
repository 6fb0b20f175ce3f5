"""Where a result came from: the git commit of the code that computed it (issue 27).

Recorded by the fit job in its results (not looked up when the results are logged), so
that a run computed at one commit and logged after a later checkout still names the commit
that computed it.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

__all__ = ["git_commit"]

_REPO = Path(__file__).resolve().parents[2]


@functools.cache
def git_commit(repo: str | Path = _REPO) -> str:
    """``<sha>`` of the checkout holding this code, ``<sha>-dirty`` when tracked files
    differ from it, ``""`` when the code is not in a git checkout (an installed package)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()

    try:
        if git("rev-parse", "--show-toplevel") != str(Path(repo).resolve()):
            return ""  # inside some other checkout (e.g. site-packages in a project)
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{sha}-dirty" if dirty else sha
