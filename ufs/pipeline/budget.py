"""A per-fit compute budget (config ``jobs.fit_budget_seconds``).

:func:`fit_budget` stops the code inside it once the **process CPU time** spent there
exceeds the budget: ``signal.setitimer(signal.ITIMER_PROF, ...)`` counts CPU time (user +
system, all threads of the process), not wall time, so a loaded shared machine does not
change which fits stop. At the deadline a ``SIGPROF`` handler raises
:class:`FitBudgetExceeded`.

Limits, stated plainly:

* Python runs signal handlers between bytecodes, so the exception is raised when the
  interpreter next gets control: one long LAPACK call (an ``eigh`` of a large matrix, say)
  finishes before the fit stops, and the time spent can exceed the budget by that call.
* CPU time of every thread counts: with a multi-threaded BLAS a fit spends the budget
  faster than the wall clock (the workflow runs one BLAS thread per job).
* Signal handlers can only be set from the main thread, and ``SIGPROF``/``setitimer`` do
  not exist on Windows: there, and when ``seconds`` is ``None`` or ``0``, the block runs
  without a budget. It also runs without one when the current ``SIGPROF`` handler was not
  installed from Python (``signal.getsignal`` returns ``None``), as it could not be restored.

The memory side of the budget is the up-front refusal of
:func:`ufs.validation.check_dense_memory` (a ``MemoryError`` naming the GiB needed and the
cap): the fit step catches ``MemoryError`` too and records it as a budget exceeded with the
reason ``"memory: <message>"`` (:func:`budget_reason`).
"""

from __future__ import annotations

import signal
import threading
import time
from types import TracebackType

__all__ = [
    "FitBudgetExceeded",
    "BUDGET_ERRORS",
    "budget_available",
    "budget_key",
    "budget_reason",
    "fit_budget",
]


class FitBudgetExceeded(BaseException):
    """The CPU time of a fit exceeded its budget.

    A ``BaseException`` (as ``KeyboardInterrupt``), so that an ``except Exception`` inside
    a solver does not swallow it and let the fit run on."""

    def __init__(self, seconds: float):
        super().__init__(f"over {seconds:g} CPU-s")
        self.seconds = float(seconds)


#: the exceptions the fit step records as "budget exceeded" (time, memory)
BUDGET_ERRORS = (FitBudgetExceeded, MemoryError)


def budget_available() -> bool:
    """Whether :func:`fit_budget` can enforce a budget here (``SIGPROF`` and ``setitimer``
    exist, main thread, the current handler restorable)."""
    return (
        hasattr(signal, "setitimer")
        and hasattr(signal, "SIGPROF")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGPROF) is not None
    )


def budget_reason(exc: BaseException) -> str:
    """The recorded reason of a budget exceeded: ``"time: over 600 CPU-s"`` or
    ``"memory: <the MemoryError's message>"``."""
    if isinstance(exc, FitBudgetExceeded):
        return f"time: {exc}"
    return f"memory: {str(exc) or type(exc).__name__}"


def _same_outcome(task: dict, budget: float) -> bool:
    """Whether the fits of ``task`` (a fit job's recorded task, ``ufs.pipeline.steps.fit``)
    would end the same under a time budget of ``budget`` CPU-s: each completed fit used
    at most ``budget``, and a fit stopped (or skipped) for time ran under a budget of at
    least ``budget`` (it would stop again). A memory refusal does not depend on it."""
    ran = task.get("budget_seconds") or float("inf")
    for fact in (task.get("fits") or {}).values():
        if not fact.get("budget_exceeded"):
            if float(fact.get("fit_cpu_seconds", float("inf"))) > budget:
                return False
        elif not str(fact.get("budget_reason", "")).startswith("memory:") and budget > ran:
            return False
    return True


def budget_key(info: dict | None, budget: float | None) -> float | None:
    """The fit job's re-run key for the budget: a change of
    ``jobs.fit_budget_seconds`` re-runs only the jobs whose outcome it can change.

    ``info`` is the job's recorded output (``None``: not run yet). When every recorded fit
    would end the same under ``budget`` (:func:`_same_outcome`), the key the job last ran
    with is returned, so Snakemake sees no parameter change; otherwise ``budget`` itself.
    Raising the budget from 120 to 600 s thus re-runs the jobs with a fit stopped at 120 s
    and keeps the others, whose fits finished within 120 s and are the same at 600 s.
    The job always runs with the config's budget and records it (``budget_seconds``) next
    to the key it ran under (``budget_key``)."""
    if info is None or budget is None:
        return budget
    tasks = info.get("tasks") or []
    keys = {t.get("budget_key", t.get("budget_seconds")) for t in tasks}
    if len(keys) != 1 or not all(_same_outcome(t, float(budget)) for t in tasks):
        return budget
    return keys.pop()


class fit_budget:  # lower case: used as a function, ``with fit_budget(600): ...``
    """Context manager: raise :class:`FitBudgetExceeded` once the block has used more than
    ``seconds`` of process CPU time (see the module docstring for the limits).

    ``seconds`` ``None`` or ``0``: no budget. The previous ``SIGPROF`` handler and
    ``ITIMER_PROF`` timer are restored on exit (an outer timer resumes with the CPU time
    it has left). If the exception is lost (raised inside a ``__del__``, say), it is raised
    again after every further ``max(seconds, 1)`` CPU seconds until the block ends.
    ``cpu_seconds`` is the CPU time spent in the block, set on exit.
    """

    def __init__(self, seconds: float | None):
        self.seconds = float(seconds) if seconds else 0.0
        self.cpu_seconds = 0.0
        self._active = self._armed = self._outer_first = False

    def _handler(self, signum, frame) -> None:
        if not self._armed or (frame is not None and frame.f_code is _EXIT_CODE):
            return  # disarmed, or about to be: never raise inside the clean-up
        if self._outer_first:  # an enclosing budget's deadline comes first
            self._outer_first = False
            if callable(self._previous):
                self._previous(signum, frame)
            left = max(self.seconds - (time.process_time() - self._t0), 1e-6)
            signal.setitimer(signal.ITIMER_PROF, left, max(self.seconds, 1.0))
            return
        raise FitBudgetExceeded(self.seconds)

    def __enter__(self) -> fit_budget:
        self._t0 = time.process_time()
        if self.seconds <= 0 or not budget_available():
            return self
        self._outer = signal.getitimer(signal.ITIMER_PROF)
        self._outer_first = 0 < self._outer[0] < self.seconds
        self._previous = signal.signal(signal.SIGPROF, self._handler)
        self._armed = self._active = True
        first = self._outer[0] if self._outer_first else self.seconds
        signal.setitimer(signal.ITIMER_PROF, first, max(self.seconds, 1.0))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # the handler never raises in this frame (_EXIT_CODE): the clean-up runs in full
        self._armed = False
        self.cpu_seconds = time.process_time() - self._t0
        if self._active:
            self._active = False
            signal.setitimer(signal.ITIMER_PROF, 0.0, 0.0)
            signal.signal(signal.SIGPROF, self._previous)
            delay, interval = self._outer
            if delay > 0:  # an outer timer: resume it with the CPU time it has left
                left = delay - self.cpu_seconds
                if left <= 0:  # it has fired in here: its next period
                    left = interval
                if left > 0:
                    signal.setitimer(signal.ITIMER_PROF, left, interval)


_EXIT_CODE = fit_budget.__exit__.__code__
