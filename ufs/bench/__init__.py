"""Deprecated: the modules of ``ufs.bench`` moved, by job, to four packages:

* :mod:`ufs.pipeline` — what the workflow's scripts call: config and plan, the data, fit
  and evaluate steps, budget, status, provenance, lineage, archive;
* :mod:`ufs.tracking` — MLflow;
* :mod:`ufs.stats` — ranks, paired tests and references over a tidy results table;
* :mod:`ufs.report` — tables, figures, markdown, HTML and LaTeX built from the evaluations.

``import ufs.bench.<module>`` still works for one release: it warns and returns the moved
module itself (not a copy), so attributes set on it are seen by the new name too.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old module name → its new dotted name
MOVED = {
    **{
        m: f"ufs.pipeline.{m}"
        for m in (
            "archive budget config cost_estimate data_steps io lineage provenance slices "
            "status steps"
        ).split()
    },
    "tracking": "ufs.tracking",
    **{
        m: f"ufs.stats.{m}"
        for m in "input_scaling paired pairwise ranking references views".split()
    },
    **{
        m: f"ufs.report.{m}"
        for m in (
            "absolute_h aggregate answer benchmark_report cells compare figures flag_causes "
            "html latex paper_verdicts placement reproduction sensitivity"
        ).split()
    },
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``ufs.bench.<old>`` to the moved module, with a ``DeprecationWarning``."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, old = fullname.rpartition(".")
        if prefix == __name__ and old in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None  # a placeholder; exec_module replaces it in sys.modules

    def exec_module(self, module) -> None:
        new = MOVED[module.__name__.rpartition(".")[2]]
        warnings.warn(
            f"{module.__name__} moved to {new}; the old name goes in a future release",
            DeprecationWarning,
            stacklevel=2,
        )
        # importlib returns whatever sys.modules holds after exec_module: the moved module
        sys.modules[module.__name__] = importlib.import_module(new)


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())


def __getattr__(name: str):
    if name in MOVED:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
