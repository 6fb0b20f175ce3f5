"""The README, the project's front door: short, its snippets run as written, and every number
it quotes is the one its source says (the generated reports, the method and data-set
registries, the performance page)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def _readme() -> str:
    return README.read_text()


def _flat(text: str) -> str:
    """``text`` with every run of white space one space (a sentence may wrap anywhere)."""
    return " ".join(text.split())


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", _readme(), flags=re.S)


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    assert len(_readme().splitlines()) <= 200


def test_the_library_snippet_runs_and_says_what_it_returns():
    blocks = _python_blocks()
    assert blocks, "the README has no python block"
    scope: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - our own README
    assert scope["X5"].shape == (178, 5)
    assert np.isscalar(scope["sel"].selection_objective_)
    assert scope["mcfs"].get_support().sum() == 3  # the comment's "rounded down: 3"
    assert len(scope["lap"].feature_order_) == 13


def test_the_names_the_readme_imports_exist():
    import ufs

    for name in ("AllFeatures", "RandomFeatures", "MaxVariance", "KMeansUFS", "make_estimator"):
        assert hasattr(ufs, name), name


def _sensitivity_rows(report: str, section: str) -> dict[str, dict[str, str]]:
    """The sensitivity table of ``section`` (e.g. "label-free ACC") in docs/benchmark.md:
    view -> column -> cell."""
    heading = "## How the verdicts move with the rules"
    part = report.split(heading, 1)[1].split("\n## ", 1)[0]
    block = part.split(f"\n**{section}**\n", 1)[1]
    lines = []
    for ln in block.lstrip("\n").splitlines():
        if not ln.startswith("|"):
            break
        lines.append(ln)
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


def test_the_results_at_a_glance_are_the_benchmark_reports():
    """Each headline bullet and its strength (how many views keep it) is read off the
    sensitivity tables of docs/benchmark.md, which tests/test_verdicts.py regenerates from the
    archive byte for byte."""
    readme = _flat(_readme())
    report = (DOCS / "benchmark.md").read_text()
    acc = _sensitivity_rows(report, "label-free ACC")
    nmi = _sensitivity_rows(report, "label-free NMI")
    n_views = len(acc)
    assert n_views == len(nmi) == 8
    assert f"in every one of the {n_views} views" in readme
    assert acc["primary"]["N"] == "24 families" and "**24 independent families**" in readme
    assert acc["all"]["N"] == "31 data sets" and "29 real data sets" in readme
    # no method beats all features: in every view, for both metrics
    for table in (acc, nmi):
        assert all(row["better than all features"] == "none" for row in table.values())
    assert "**No method beats using all features**, for ACC or NMI" in readme
    # MCFS against the expected random subset: every NMI view, 6 of 8 ACC views
    nmi_keep = [v for v, row in nmi.items() if "`mcfs`" in row["better than random"]]
    acc_keep = [v for v, row in acc.items() if "`mcfs`" in row["better than random"]]
    assert acc["primary"]["better than random"] == "`mcfs`"
    assert f"in every view for NMI ({len(nmi_keep)} of {n_views})" in readme
    assert len(nmi_keep) == n_views
    assert f"for ACC it holds in {len(acc_keep)} of {n_views} views" in readme
    # and in as many leave-one-family-out runs as the leaderboard's cell says
    row = next(r for r in report.splitlines() if r.startswith("| ") and "| `mcfs` |" in r)
    kept = re.search(r"▲ fragile: (\d+ of \d+) leave-one-family-out runs", row).group(1)
    assert f"and in {kept} leave-one-family-out runs: a fragile verdict" in readme
    assert sorted(set(acc) - set(acc_keep)) == ["absolute_h", "complete_cases"]
    assert "(not under complete cases, nor on the absolute h grid)" in readme
    # the defaults that lose to random subsets
    assert acc["primary"]["worse than random"] == "`dgufs`, `rne`, `rsr`, `udfs`"
    assert "DGUFS, RNE, RSR and UDFS" in readme
    # label-tuned: N = 5 decides nothing
    flat_report = _flat(report)
    assert "label-tuned ACC** (N = 5 data sets" in flat_report
    assert "label-tuned runs cover 5 data sets" in readme
    assert "the smallest Holm-adjusted p of the 171 pairwise tests is 1 " in flat_report
    # the compute the archived run took
    cpu_h = re.search(r"compute used ([\d.]+) CPU-h", flat_report).group(1)
    assert f"(the archived run took {cpu_h})" in readme


def test_the_re_run_cost_is_the_cost_lines(tmp_path):
    """The README's re-run cost of the benchmark is what the run's cost line prints on an
    empty output folder: the total, and the stability step's share."""
    import yaml

    from ufs.pipeline.config import build_plan
    from ufs.pipeline.run_cost import run_cost

    config = yaml.safe_load((REPO / "config" / "experiments" / "benchmark.yaml").read_text())
    cost = run_cost(build_plan(config, warn=False), config, tmp_path)
    total, stability = cost.cpu_hours, cost.stability_cpu_s / 3600
    readme = _flat(_readme())
    assert f"~{total:.0f} CPU-h by the cost model, {stability:.0f} of them the stability step" in (
        readme
    )


def test_the_paper_verdicts_are_the_reproduction_reports():
    report = _flat((DOCS / "reproduction.md").read_text())
    readme = _flat(_readme())
    verdicts = dict(
        re.findall(
            r"\*\*(\w+)\*\* — “.*?”.*?\*\*(not supported|partly supported|supported)\*\*", report
        )
    )
    named = {"kmeans_ufs": "K-means UFS", "dgufs": "DGUFS", "fsbc": "FSBC", "golfs": "GOLFS"}
    for key, name in named.items():
        assert f"{name} **{verdicts[key]}**" in readme, key
    spcafs = report.split("**spcafs** — ", 1)[1].split("**Published cells", 1)[0]
    assert "`spcafs` improves" in spcafs and "3 of 6: **partly supported**" in spcafs
    assert "**not supported** on z-scored input, **partly supported** on its raw input" in readme
    # the DGUFS reproduction's cost, as its archive records it
    jobs, minutes = re.search(
        r"reproduction-dgufs\.tar\.xz`.*?(\d+) jobs, ([\d.]+) min of job time", report
    ).groups()
    assert f"DGUFS: {jobs} jobs, {minutes} min of job time" in readme


def test_the_methods_table_names_every_registered_method():
    from ufs.registry import available_methods

    readme = _readme()
    methods = readme.split("## Methods", 1)[1].split("\n## ", 1)[0]
    names = available_methods()
    assert f"A library of {len(names)} selectors" in _flat(readme)
    for name in names:
        assert f"`{name}`" in methods, name


def test_the_data_set_counts_are_the_registrys():
    from ufs.datasets.registry import available_datasets, get_dataset

    specs = [get_dataset(n) for n in available_datasets()]
    bundled = [s for s in specs if s.source in ("sklearn", "simulation")]
    url = [s for s in specs if s.source == "url"]
    openml = [s for s in specs if s.source == "openml"]
    manual = sorted(s.name for s in specs if s.source == "manual")
    assert len(bundled) + len(url) + len(openml) + len(manual) == len(specs)
    text = _flat(_readme().split("## Data sets", 1)[1].split("\n## ", 1)[0])
    assert text.startswith(f"{len(specs)} registered: {len(bundled)} that need no download"), text[
        :80
    ]
    assert f"{len(url)} fetched from a pinned public URL" in text
    assert f"{len(openml)} from OpenML" in text
    assert f"{len(manual)} with no public download (" + ", ".join(f"`{m}`" for m in manual) in text
    from ufs.datasets.families import family_of

    families = {family_of(s.name) for s in specs}  # the simulations are one family
    assert f"; {len(families)} families, the data sets of one source counting once" in text


def test_the_default_runs_time_is_the_performance_pages():
    readme = _flat(_readme())
    quoted = re.search(r"in about (\d+) minutes on 2 cores", readme)
    assert quoted, "the README quotes no time for the default run"
    page = (DOCS / "performance.md").read_text()
    section = page.split("## The default run", 1)[1].split("\n## ", 1)[0]
    walls = [float(w) for w in re.findall(r"^\| ([\d.]+) s \|", section, flags=re.M)]
    assert walls, "docs/performance.md gives no wall time of the default run"
    assert all(round(w / 60) == int(quoted.group(1)) for w in walls), walls


def test_every_link_of_the_readme_resolves():
    """Every link is a file of the repository, or a reference page the site generates."""
    generated = {"docs/reference/config.md", "docs/reference/cli.md", "docs/reference/methods.md"}
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", _readme()):
        if "://" in target:
            continue
        assert (REPO / target).exists() or target in generated, target
