"""Everything a reader sees: per-data-set tables and figures from the
evaluation files (:mod:`.aggregate`, :mod:`.tables`, :mod:`.figures`, :mod:`.latex`,
:mod:`.html`), the benchmark report (:mod:`.benchmark_report`, :mod:`.answer`,
:mod:`.sensitivity`, :mod:`.absolute_h`, :mod:`.flag_causes`), the reproductions of the
seed papers (:mod:`.compare`, :mod:`.reproduction`, :mod:`.reproduction_report`,
:mod:`.paper_verdicts`) and a new
method's placement (:mod:`.placement`). Data flow one way: evaluations → tidy table
(:mod:`ufs.pipeline.io`) → statistics (:mod:`ufs.stats`) → these renderers."""
