"""Where data files are looked for: the mirror and the download cache of a run.

A registered data set's file is read from a **mirror** when one is given (a folder laid
out as the project's ``shared/datasets``: config ``mirror_dir``, else the environment's
``UFS_MIRROR``), else from the **cache**, else downloaded from its pinned public URL into
the cache, sha256-checked. The cache is one folder per user, shared by every run and
clone: config ``data_cache``, else ``UFS_DATA``, else ``UFS_DATA_CACHE``, else the
platform's cache folder (``$XDG_CACHE_HOME/ufs-bench/datasets``, ``~/.cache/…`` on Linux,
``~/Library/Caches/ufs-bench/datasets`` on macOS, ``%LOCALAPPDATA%\\ufs-bench\\datasets``
on Windows). No committed config names a mirror: it is a property of a machine, not of
an experiment.

Not imported by the data steps (their code version, part of every evaluation's lineage,
hashes what they import); the workflow passes the resolved folders to them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MIRROR_ENV", "CACHE_ENV", "user_cache_dir", "data_mirror", "data_cache"]

#: the environment variable naming a mirror folder
MIRROR_ENV = "UFS_MIRROR"
#: the environment variable naming the download cache (``UFS_DATA_CACHE`` is read too)
CACHE_ENV = "UFS_DATA"


def user_cache_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The platform's per-user cache folder for UFS-bench's data sets."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ufs-bench" / "datasets"


def data_mirror(
    config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """The mirror folder of a run: ``config["mirror_dir"]``, else ``UFS_MIRROR``, else None."""
    env = os.environ if env is None else env
    given = str((config or {}).get("mirror_dir") or "")
    return given or env.get(MIRROR_ENV) or None


def data_cache(
    config: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> str:
    """The download cache of a run (module docstring): ``config["data_cache"]``, else
    ``UFS_DATA``, else ``UFS_DATA_CACHE``, else :func:`user_cache_dir`; ``~`` expanded."""
    env = os.environ if env is None else env
    given = str((config or {}).get("data_cache") or "")
    chosen = given or env.get(CACHE_ENV) or env.get("UFS_DATA_CACHE") or str(user_cache_dir(env))
    return str(Path(chosen).expanduser())
