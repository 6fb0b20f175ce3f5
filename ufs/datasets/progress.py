"""A download's progress bar, read off the file being written.

:func:`ufs.datasets.mirror.fetch_file` streams a download into a temporary file
``.<name>.<random>.part`` beside its final place and renames it when its sha256 checks.
:class:`DownloadWatch` polls that file's size from a thread and draws a bar on a
terminal, so the download code (part of every data set's code version, hence of every
evaluation's lineage) is not touched to report progress. On a stream that is not a
terminal (a log file, CI) it draws nothing: the caller prints one line per file.

The total is the size measured on the project's mirror
(:func:`ufs.datasets.availability.download_size`); without it the bar shows bytes and rate.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TextIO

__all__ = ["DownloadWatch", "part_files", "progress_line", "remove_stale_parts"]


def part_files(folder: str | Path, name: str) -> list[Path]:
    """The temporary files of downloads of ``name`` in ``folder`` (``.<name>.*.part``,
    :func:`ufs.datasets.mirror.fetch_file`'s ``mkstemp`` prefix and suffix)."""
    return list(Path(folder).glob(f".{name}.*.part"))


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def progress_line(done: int, total: int | None, elapsed: float, *, width: int = 24) -> str:
    """One line of progress: a bar and percentage when ``total`` is known, then bytes so
    far and the mean rate over ``elapsed`` seconds."""
    rate = f"{done / elapsed / 1e6:.1f} MB/s" if elapsed > 0 else "-- MB/s"
    if total:
        frac = min(1.0, done / total)
        filled = int(round(frac * width))
        bar = "#" * filled + "." * (width - filled)
        return f"[{bar}] {100 * frac:3.0f}% {_mb(done)} of {_mb(total)}, {rate}"
    return f"{_mb(done)}, {rate}"


class DownloadWatch:
    """Context manager: while its body downloads into ``folder``, a thread draws
    :func:`progress_line` after ``label`` on ``stream`` every ``interval`` seconds, when
    ``stream`` is a terminal. On exit the line is cleared back to ``label`` (the caller
    finishes it). ``name`` is the final file's name (the temporary file starts with
    ``.<name>.`` and ends with ``.part``)."""

    def __init__(
        self,
        folder: str | Path,
        name: str,
        *,
        total: int | None,
        stream: TextIO,
        label: str = "",
        interval: float = 0.2,
    ) -> None:
        self.folder, self.name, self.total = Path(folder), name, total
        self.stream, self.label, self.interval = stream, label, interval
        self.drawn = 0  # lines drawn (a test reads it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._width = 0

    def written(self) -> int:
        """Bytes in the download's temporary file now (0 when there is none)."""
        size = 0
        for part in part_files(self.folder, self.name):
            try:
                size = max(size, part.stat().st_size)
            except FileNotFoundError:  # renamed or removed between glob and stat
                continue
        return size

    def _draw(self, text: str) -> None:
        line = f"\r{self.label}{text}"
        pad = max(0, self._width - len(line))
        self.stream.write(line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            done = self.written()
            if done:
                self._draw(progress_line(done, self.total, time.monotonic() - self._start))
                self.drawn += 1

    def __enter__(self) -> DownloadWatch:
        self._start = time.monotonic()
        isatty = getattr(self.stream, "isatty", None)
        if callable(isatty) and isatty():
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if self.drawn:
                self._draw("")
                self.stream.write(f"\r{self.label}")
                self.stream.flush()


def remove_stale_parts(folder: str | Path, name: str, *, older_than: float = 300.0) -> list[Path]:
    """Remove the temporary files ``.<name>.*.part`` in ``folder`` left by a download
    that was killed (not written to for ``older_than`` seconds: a live download writes
    every second or so); returns what was removed. The final file is never half-written
    (it appears by an atomic rename), so this only frees space."""
    removed = []
    now = time.time()
    for part in part_files(folder, name):
        try:
            if now - part.stat().st_mtime > older_than:
                part.unlink()
                removed.append(part)
        except FileNotFoundError:
            continue
    return removed
