"""Statistics over a tidy results table: average ranks, Friedman and Nemenyi
(:mod:`.ranking`), paired tests against the references (:mod:`.paired`,
:mod:`.references`), all-pairs tests (:mod:`.pairwise`), the cells every test is computed
on (:mod:`.views`), input scaling as a factor (:mod:`.input_scaling`). No file I/O and no
rendering: :mod:`ufs.report` turns their results into text and figures."""
