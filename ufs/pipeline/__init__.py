"""What the Snakemake workflow's scripts call: the config and its plan
(:mod:`.config`), the data, fit and evaluate steps (:mod:`.data_steps`, :mod:`.steps`),
the per-fit budget and status, provenance, the lineage that keys every job, and the
archive that outlives a machine. Pure Python (no Snakemake import), so every step can be
run and tested on its own. Imports only the library (``ufs.*``) — never ``ufs.stats`` or
``ufs.report``."""
