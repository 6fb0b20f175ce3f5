"""LaTeX tables (ufs.report.latex): booktabs, best bold, runner-up underlined, references apart,
status marks, escaping; compiled by pdflatex when the machine has it."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from tests.test_figures import HS, _frames, _record, _row
from tests.test_ranking import _tables
from ufs.report import aggregate, latex, rank_report
from ufs.stats import ranking


def _balanced(tex: str) -> bool:
    """Braces balance (escaped ``\\{``, ``\\}`` do not count) and never close early."""
    depth = 0
    for brace in re.findall(r"(?<!\\)[{}]", tex):
        depth += 1 if brace == "{" else -1
        if depth < 0:
            return False
    return depth == 0


def _body(tex: str) -> list[list[str]]:
    """The cells of each data row of the first tabular (between the first \\midrule and
    \\bottomrule; rules skipped)."""
    inner = tex.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    rows = [ln.removesuffix(r" \\") for ln in inner.splitlines() if ln.endswith(r"\\")]
    return [[c.strip() for c in r.split(" & ")] for r in rows]


def test_escape_special_characters():
    assert latex.escape("fsbc_nobal") == r"fsbc\_nobal"
    assert latex.escape("a&b%c$d#e{f}g~h^i\\j") == (
        r"a\&b\%c\$d\#e\{f\}g\textasciitilde{}h\textasciicircum{}i\textbackslash{}j"
    )
    assert latex.escape("± † ‡ § ◊ – <") == (r"$\pm$ \dag{} \ddag{} \S{} $\diamond$ -- \textless{}")


HAND = [
    latex.Row("a", (latex.Cell("0.90", 0.90), latex.Cell("0.10", 0.10))),
    latex.Row("b", (latex.Cell("0.90", 0.90), latex.Cell("0.30", 0.30))),  # tie for best
    latex.Row("c", (latex.Cell("0.80", 0.80), latex.Cell("0.30", 0.30))),
    latex.Row("d", (latex.Cell("0.70", 0.70), latex.Cell("--"))),  # no value: not compared
    latex.Row(r"\_ref", (latex.Cell("0.99", 0.99), latex.Cell("0.99", 0.99)), "reference"),
]


def test_best_bold_ties_both_runner_up_underlined_references_apart():
    tex = latex.tabular(["method", "x", "y"], HAND)
    assert tex.startswith(r"\begin{tabular}{lrr}" + "\n" + r"\toprule")
    assert tex.count(r"\midrule") == 2 and tex.rstrip().endswith(
        r"\bottomrule" + "\n" + r"\end{tabular}"
    )
    assert _balanced(tex)
    rows = {r[0]: r[1:] for r in _body(tex)}
    assert rows["a"] == [r"\textbf{0.90}", r"\underline{0.10}"]  # y: 0.30 > 0.10
    assert rows["b"] == [r"\textbf{0.90}", r"\textbf{0.30}"]  # a tie: both bold
    assert rows["c"] == [r"\underline{0.80}", r"\textbf{0.30}"]  # after a tie: the next value
    assert rows["d"] == ["0.70", "--"]
    # the reference: after its own \midrule, in italics, never bold although highest
    assert rows[r"\textit{\_ref}"] == [r"\textit{0.99}", r"\textit{0.99}"]
    assert tex.index(r"\textit{\_ref}") > tex.rindex(r"\midrule")
    # column y, lower is better (ranks): a is best, b and c share the runner-up
    low = {
        r[0]: r[1:]
        for r in _body(latex.tabular(["method", "x", "y"], HAND, higher_is_better=False))
    }
    assert [low[m][1] for m in "abc"] == [
        r"\textbf{0.10}",
        r"\underline{0.30}",
        r"\underline{0.30}",
    ]


@pytest.fixture()
def frames(tmp_path):
    recs = [
        _record("kmeans_ufs", "subset", [_row(h, 0.6) for h in HS]),
        _record("fsbc", "subset", [_row(h, 0.6) for h in HS]),  # ties kmeans_ufs everywhere
        _record("fsbc_nobal", "subset", [_row(h, 0.5) for h in HS]),
        _record("ndfs", "ranking", [_row(h, 0.4, "not_converged") for h in HS]),
        _record("mcfs", "subset", [_row(h, 0.55, "degenerate" if h == 40 else "ok") for h in HS]),
        _record("all_features", "full", [{**_row(64, 0.7), "h_label": "all"}]),
    ]
    for i in range(2):  # two draws of the chance reference, above every method
        recs.append(
            _record("random", "ranking", [_row(h, 0.9 + 0.02 * i) for h in HS], pid=f"r{i}")
        )
        recs[-1]["params"] = {"draw": i}
    return _frames(tmp_path, recs)


def test_dataset_tables(frames):
    _, sel = frames
    tex = latex.dataset_tables(sel, "toy_set")
    assert _balanced(tex)
    assert tex.count(r"\begin{table}") == 4  # (label-tuned, label-free) × (ACC, NMI)
    assert r"\label{tab:toy-set-label-free-acc}" in tex
    code = "\n".join(ln for ln in tex.splitlines() if not ln.startswith("%"))
    assert re.search(r"(?<!\\)_", code) is None  # every underscore escaped
    assert r"toy\_set" in code and r"kmeans\_ufs" in code
    free_acc = tex[tex.index(r"\label{tab:toy-set-label-free-acc}") :]
    rows = {r[0]: r[1:] for r in _body(free_acc)}
    assert rows[r"kmeans\_ufs"][0] == r"\textbf{60.0 $\pm$ 2.0}"
    assert rows["fsbc"][0] == r"\textbf{60.0 $\pm$ 2.0}"  # tied: both bold
    assert rows["mcfs"][0] == r"\underline{55.0 $\pm$ 2.0}"
    assert rows[r"fsbc\_nobal (variant)"][0] == "50.0 $\\pm$ 2.0"
    assert rows["ndfs"][0] == r"40.0 $\pm$ 2.0\textsuperscript{\dag}"  # not converged
    assert rows["mcfs"][2] == r"\underline{55.0 $\pm$ 2.0\textsuperscript{$\diamond$}}"
    # label-free: the mean over h (the rank score), never a best over h the labels choose
    assert "best over" not in free_acc.split(r"\end{table}")[0]
    assert rows[r"kmeans\_ufs"][-1] == r"\textbf{60.0}"  # mean over h
    assert rows["ndfs"][-1] == r"40.0\textsuperscript{\dag}"
    # label-tuned: the mean over h, then the best over h with its h
    tuned = tex[tex.index(r"\label{tab:toy-set-oracle-acc}") :]
    assert "mean over $h$ & best over $h$" in tuned.split(r"\end{table}")[0]
    tuned_rows = {r[0]: r[1:] for r in _body(tuned)}
    assert tuned_rows[r"kmeans\_ufs"][-1].endswith(r"($h=5$)}")
    # random is highest but a reference: italic, after a \midrule, not bold
    assert rows[r"\textit{random}"][0] == r"\textit{91.0 [90.1, 91.9]}"  # mean [p5, p95]
    assert not any(r"\textbf" in c for c in rows[r"\textit{random}"])
    assert r"\dag{} a fit behind the number did not converge" in free_acc
    assert "reads mean [5th, 95th percentile] over its independent draws" in free_acc


def test_rank_table_lowest_rank_bold():
    s = {f"d{j}": {"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.1} for j in range(3)}
    s["d0"]["b"] = 0.85  # b ahead of c on one data set
    t = _tables(s, status={("d1", "d"): "diverged"})
    tex = latex.rank_table(ranking.rank_all(t))
    assert _balanced(tex) and tex.count(r"\begin{table}") == 1
    assert r"\multicolumn{2}{c}{label-free defaults} \\" in tex  # no oracle rows in t
    assert r"\cmidrule(lr){2-3}" in tex
    rows = {r[0]: r[1:] for r in _body(tex.split(r"\cmidrule", 1)[1])}
    assert rows["a"] == [r"\textbf{1.00}", r"\textbf{1.00}"]
    assert rows["b"] == [r"\underline{2.33}", r"\underline{2.33}"]
    assert rows["d"] == [r"4.00\textsuperscript{\ddag}"] * 2
    assert rows["Friedman $p$"][0] == rank_report._fmt_p(ranking.rank_all(t)[0].pvalue)


def test_write_dataset_outputs_writes_the_tex_beside_the_markdown(frames, tmp_path):
    ev = tmp_path / "ev.json"  # written by the frames fixture
    aggregate.write_dataset_outputs(
        [ev], "toy", tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "f"
    )
    tex = (tmp_path / "t.tex").read_text()
    assert tex == latex.dataset_tables(
        aggregate.select_protocols(aggregate.collect([ev], "toy")), "toy"
    )


@pytest.mark.skipif(
    not (shutil.which("pdflatex") or shutil.which("latexmk")),
    reason="neither pdflatex nor latexmk on this machine: the LaTeX is checked as text only",
)
def test_tables_compile(frames, tmp_path):
    _, sel = frames
    (tmp_path / "toy.tex").write_text(latex.dataset_tables(sel, "toy_set"))
    s = {f"d{j}": {"a_1": 0.9, "b": 0.8, "c": 0.1} for j in range(3)}
    (tmp_path / "ranks.tex").write_text(latex.rank_table(ranking.rank_all(_tables(s))))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        "\\input{toy.tex}\n\\input{ranks.tex}\n\\end{document}\n"
    )
    if shutil.which("pdflatex"):
        cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    else:
        cmd = ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "doc.pdf").read_bytes()[:5] == b"%PDF-"
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "Missing character" not in log and "Undefined control sequence" not in log


def test_rank_table_gives_a_cd_only_where_friedman_rejects():
    """Ranks.tex printed a CD in every column, also where the test did not reject."""
    clear = {f"d{j}": {"a": 0.9, "b": 0.5, "c": 0.1} for j in range(8)}
    r = ranking.rank_all(_tables(clear))
    assert r[0].pvalue < r[0].alpha
    rows = {x[0]: x[1:] for x in _body(latex.rank_table(r).split(r"\cmidrule", 1)[1])}
    assert rows[r"CD ($\alpha = 0.05$)"][0] == f"{r[0].cd:.2f}"
    rng = np.random.default_rng(0)
    noise = {f"d{j}": {m: float(rng.uniform()) for m in "abc"} for j in range(4)}
    r = ranking.rank_all(_tables(noise))
    assert r[0].applicable and r[0].pvalue >= r[0].alpha
    rows = {x[0]: x[1:] for x in _body(latex.rank_table(r).split(r"\cmidrule", 1)[1])}
    assert rows[r"CD ($\alpha = 0.05$)"] == ["--", "--"]


needs_tex = pytest.mark.skipif(
    not shutil.which("pdflatex"),
    reason="no pdflatex on this machine (.ci/run installs it): the widths are checked by compiling",
)


def _overfull(tmp_path, options: str, width: str, files: dict[str, str]) -> list[str]:
    """Compile ``files`` in an article of text width ``width``; the log's overfull boxes."""
    for name, tex in files.items():
        (tmp_path / name).write_text(tex)
    inputs = "".join(f"\\input{{{n}}}\n\\clearpage\n" for n in files)
    (tmp_path / "doc.tex").write_text(
        f"\\documentclass[{options}]{{article}}\n\\usepackage{{booktabs,graphicx}}\n"
        f"\\setlength{{\\textwidth}}{{{width}}}\n\\begin{{document}}\n{inputs}\\end{{document}}\n"
    )
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (tmp_path / "doc.log").read_text(errors="replace")
    return re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)


@pytest.fixture()
def wide(tmp_path):
    """A benchmark-sized data set: six values of h, long names, every status mark, and a
    rank table of 26 methods; the widest tables the workflow writes."""
    hs = (50, 100, 150, 200, 250, 300)
    names = ["kmeans_ufs_exact", "lrpfs_ma2024", "fsbc_nobal", "sf2sog", "laplacian_score"]
    statuses = ["not_converged", "diverged", "degenerate", "ok", "ok"]
    recs = [
        _record(m, "subset", [_row(h, 0.55 + 0.01 * i, statuses[i]) for h in hs])
        for i, m in enumerate(names)
    ]
    recs.append(_record("all_features", "full", [{**_row(300, 0.7), "h_label": "all"}]))
    for i in range(2):
        recs.append(
            _record("random", "ranking", [_row(h, 0.3 + 0.02 * i) for h in hs], pid=f"r{i}")
        )
        recs[-1]["params"] = {"draw": i}
    _, sel = _frames(tmp_path, recs)
    methods = [f"method_number_{i:02d}" for i in range(26)]
    rng = np.random.default_rng(0)
    s = {f"d{j}": {m: float(rng.uniform()) for m in methods} for j in range(12)}
    return {
        "toy.tex": latex.dataset_tables(sel, "toy_set_with_a_long_name"),
        "ranks.tex": latex.rank_table(ranking.rank_all(_tables(s))),
    }


@needs_tex
@pytest.mark.parametrize(("options", "width"), [("", "17cm"), ("twocolumn", "17cm"), ("", "12cm")])
def test_every_table_fits_the_text_width(wide, tmp_path, options, width):
    """The per-data-set tables overflowed a 17 cm text by 52-60 pt and ranks.tex by
    26 pt. Every table now fits the line, in one column of a two-column paper too."""
    assert _overfull(tmp_path, options, width, wide) == []


@needs_tex
def test_fit_width_scales_only_what_is_wider(tmp_path):
    """A table narrower than the line keeps its natural size (it is not blown up): the
    scaled box of a three-cell table is as wide as the same tabular set bare."""
    body = latex.tabular(["method", "x"], [latex.Row("a", (latex.Cell("1"),))])
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        f"\\setbox0\\hbox{{{latex.fit_width(body)}}}\\typeout{{FIT=\\the\\wd0}}\n"
        f"\\setbox0\\hbox{{{body}}}\\typeout{{BARE=\\the\\wd0}}\n"
        "\\end{document}\n"
    )
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    fit = re.search(r"FIT=([\d.]+)pt", proc.stdout).group(1)
    bare = re.search(r"BARE=([\d.]+)pt", proc.stdout).group(1)
    assert float(fit) == pytest.approx(float(bare), abs=0.01) and float(bare) < 200
