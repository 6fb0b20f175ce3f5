"""Per-fit solver status: one definition for the fit and evaluate steps, the tables,
the figures and the ranks across data sets (numpy only, so aggregation jobs stay light)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FIT_STATUSES", "STATUS_MARK", "fit_label", "fit_status", "is_degenerate", "worst"]

#: Per-fit solver status, worst first (:func:`fit_status`).
FIT_STATUSES = ("budget_exceeded", "diverged", "not_converged", "degenerate", "fixed_budget", "ok")
#: marks of a table cell, figure point or rank behind which a fit failed or is degenerate
STATUS_MARK = {"not_converged": "†", "diverged": "‡", "budget_exceeded": "§", "degenerate": "◊"}


def worst(statuses) -> str:
    """The worst of ``statuses`` (:data:`FIT_STATUSES` order; anything that is not a
    status string, e.g. a missing value, is ignored); ``"ok"`` if none."""
    present = {s for s in statuses if isinstance(s, str)}
    return next((s for s in FIT_STATUSES if s in present), "ok")


def fit_label(kind: str, h) -> str:
    """The label of a fit in the fit results: ``rank`` (a ranking method's one fit),
    ``all`` (a full method) or ``h<h>`` (a subset method, one fit per h)."""
    return {"ranking": "rank", "full": "all"}.get(kind, f"h{h}")


def is_degenerate(
    fit_info: dict[str, Any], h: int | None = None, warnings: list[str] | tuple[str, ...] = ()
) -> bool:
    """Whether round-off or a trivial rule decided the fit's answer (``"degenerate"`` in
    :func:`fit_status`, which applies it after divergence and non-convergence): the estimator
    set ``degenerate_``; a ranking's ``resolved_rank`` is below ``h``; or a linear solve was
    finished another way (``RoundoffSolveWarning``)."""
    resolved = fit_info.get("resolved_rank")
    return bool(
        fit_info.get("degenerate")
        or any(w.startswith("RoundoffSolveWarning") for w in warnings)
        or (h is not None and resolved is not None and int(h) > int(resolved))
    )


def fit_status(
    fit_info: dict[str, Any],
    objective=None,
    warnings: list[str] | tuple[str, ...] = (),
    *,
    fixed_budget: bool = False,
    h: int | None = None,
) -> str:
    """The status of one fit, from the facts a fit records (one definition for the package).

    * ``"budget_exceeded"``: the fit was stopped over its CPU-time budget, refused for
      memory, or skipped after an earlier ``h`` went over (``fit_info["budget_exceeded"]``,
      :mod:`ufs.pipeline.budget`); it has no result;
    * ``"diverged"``: the estimator set ``diverged_`` (it stopped on overflow and kept the
      last finite iterate), its objective curve holds a non-finite value, or NumPy warned
      of an overflow during the fit;
    * ``"not_converged"``: ``converged_ = False`` while a convergence test was active: the
      iteration budget ran out before the tolerance was met;
    * ``"degenerate"``: the answer is decided by round-off or by a trivial rule, not by the
      method: the estimator set ``degenerate_`` (e.g. DGUFS's selection is the ``h``
      smallest-norm features), or a ranking whose scores collapse has ``resolved_rank_``
      (:func:`ufs.base.resolved_rank`) below ``h``, so the top ``h`` is partly chosen by
      round-off (SPCAFS at large ``γ``), or a solve of the fit was defeated by round-off
      and finished another way (it warned ``RoundoffSolveWarning``: a floored linear
      solve, :class:`ufs.linalg.FlooredSPDFactor`, or an uncollectable tied eigenspace,
      :func:`ufs.eigen.extreme_eigenvectors`);
    * ``"fixed_budget"``: ``converged_ = False`` because the method runs exactly
      ``max_iter`` iterations by design (``ufs.pipeline.steps.fixed_iteration_budget``), not a failure;
    * ``"ok"``: converged, or a method without an iterative solver.

    ``fit_info``: the fitted scalar attributes (``converged``, ``diverged``, ``degenerate``,
    ``resolved_rank``, …); ``h``: the number of features the row evaluates;
    ``objective``: ``objective_`` per iteration; ``warnings``: ``"Category: message"``.
    """
    if fit_info.get("budget_exceeded"):
        return "budget_exceeded"
    curve = None
    if objective is not None:
        # JSON stores non-finite values as None / "inf" / "-inf"
        curve = np.array([np.nan if v is None else float(v) for v in np.ravel(objective)])
    if (
        fit_info.get("diverged")
        or (curve is not None and not np.all(np.isfinite(curve)))
        or any(w.startswith("RuntimeWarning") and "overflow" in w for w in warnings)
    ):
        return "diverged"
    if fit_info.get("converged") is False and not fixed_budget:
        return "not_converged"
    if is_degenerate(fit_info, h, warnings):
        return "degenerate"
    if fit_info.get("converged") is False:
        return "fixed_budget"
    return "ok"
