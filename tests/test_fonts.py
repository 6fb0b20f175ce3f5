"""The figures' font (ufs.report.fonts): DejaVu Sans cut to the characters the figures
write, renamed UFS Sans; the same drawings, cheaper PDFs."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from ufs.report import figures, fonts

pytest.importorskip("fontTools")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """UFS Sans made afresh in a cache folder of this module's own, and registered only
    for its tests (the process's other figures keep the fonts of its own cache)."""
    import matplotlib as mpl
    from matplotlib import font_manager

    cache = tmp_path_factory.mktemp("mplcache")
    # matplotlib's cache folder redirected only while the fonts are made: the module's other
    # tests (and ``font_family()``'s per-process answer) keep the process's own
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mpl, "get_cachedir", lambda: str(cache))
        family = fonts.font_family.__wrapped__()
    try:
        yield family, sorted(cache.glob("ufs-fonts/*/*.ttf"))
    finally:  # only this fixture's fonts: others registered meanwhile stay
        font_manager.fontManager.ttflist[:] = [
            f for f in font_manager.fontManager.ttflist if not Path(f.fname).is_relative_to(cache)
        ]
        font_manager.fontManager._findfont_cached.cache_clear()


def _source(name: str) -> Path:
    return fonts.source_folder() / name


def test_the_four_faces_are_made_once_and_registered(made, monkeypatch):
    family, files = made
    assert family == ["UFS Sans", "DejaVu Sans"]
    assert [f.name for f in files] == [
        "UFSSans-Bold.ttf",
        "UFSSans-BoldOblique.ttf",
        "UFSSans-Oblique.ttf",
        "UFSSans.ttf",
    ]
    from matplotlib import font_manager

    registered = {f.fname for f in font_manager.fontManager.ttflist if f.name == "UFS Sans"}
    assert {str(f) for f in files} <= registered
    # found in the cache the second time: nothing is made again
    import matplotlib as mpl

    monkeypatch.setattr(mpl, "get_cachedir", lambda: str(files[0].parents[2]))
    monkeypatch.setattr(fonts, "make_face", lambda *a: pytest.fail("made again"))
    assert fonts.font_family.__wrapped__() == family


def test_a_damaged_copy_is_made_again(tmp_path, monkeypatch):
    import matplotlib as mpl
    from matplotlib import font_manager

    monkeypatch.setattr(mpl, "get_cachedir", lambda: str(tmp_path))
    monkeypatch.setattr(font_manager.fontManager, "ttflist", list(font_manager.fontManager.ttflist))
    assert fonts.font_family.__wrapped__()[0] == "UFS Sans"
    bold = next(tmp_path.glob("ufs-fonts/*/UFSSans-Bold.ttf"))
    good = bold.read_bytes()
    bold.write_bytes(b"not a font")
    assert fonts.font_family.__wrapped__()[0] == "UFS Sans"
    assert bold.read_bytes() == good


def test_every_character_keeps_its_glyph_and_metrics(made):
    from fontTools.ttLib import TTFont

    _, files = made
    by_name = {f.name: f for f in files}
    for face in fonts.FACES:
        src, cut = TTFont(_source(face)), TTFont(by_name[face.replace("DejaVuSans", "UFSSans")])
        src_map, cut_map = src.getBestCmap(), cut.getBestCmap()
        for ch in fonts.CHARACTERS:
            code = ord(ch)
            if code not in src_map:  # not in DejaVu Sans either: the fallback has none
                continue
            g_src, g_cut = src_map[code], cut_map.get(code)
            assert g_cut is not None, (face, ch)
            assert cut["hmtx"][g_cut] == src["hmtx"][g_src], (face, ch)
            a, b = src["glyf"][g_src], cut["glyf"][g_cut]
            if a.isComposite():
                assert b.isComposite(), (face, ch)
                continue
            assert list(a.getCoordinates(src["glyf"])[0]) == list(
                b.getCoordinates(cut["glyf"])[0]
            ), (face, ch)
        assert len(cut.getGlyphOrder()) < len(src.getGlyphOrder()) / 5


def test_only_the_family_is_renamed(made):
    from fontTools.ttLib import TTFont

    _, files = made
    cut = TTFont(next(f for f in files if f.name == "UFSSans-Bold.ttf"))
    src = TTFont(_source("DejaVuSans-Bold.ttf"))
    assert cut["name"].getDebugName(1) == "UFS Sans"
    assert cut["name"].getDebugName(6) == "UFSSans-Bold"
    for name_id in (0, 13):  # copyright and licence
        assert cut["name"].getDebugName(name_id) == src["name"].getDebugName(name_id)
    for name_id in (1, 4, 6):  # a modified Vera font must not carry the name
        assert not {"Vera", "Bitstream"} & set(cut["name"].getDebugName(name_id).split())
    assert cut["OS/2"].usWeightClass == src["OS/2"].usWeightClass


def test_a_failure_falls_back_to_dejavu_sans_and_says_so(tmp_path, monkeypatch, caplog):
    import matplotlib as mpl
    from matplotlib import font_manager

    monkeypatch.setattr(mpl, "get_cachedir", lambda: str(tmp_path))
    monkeypatch.setattr(font_manager.fontManager, "ttflist", list(font_manager.fontManager.ttflist))

    def broken(src, target):
        raise OSError("read-only cache")

    monkeypatch.setattr(fonts, "make_face", broken)
    with caplog.at_level(logging.WARNING, logger="ufs.report.fonts"):
        assert fonts.font_family.__wrapped__() == ["DejaVu Sans"]
    assert "read-only cache" in caplog.text


def _draw(family, fmt):
    """A figure with every kind of text the figures have: bold, italic, kerning pairs,
    ligatures, the status marks, a log axis's mathtext decades, a character past the cut
    font (a fallback)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.family": family, "pdf.fonttype": 42, "ps.fonttype": 42}):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
        ax.set_title("AVATAR To Wa: differ, fit, fl \u2014 \u2020 \u25ca", fontweight="bold")
        ax.set_xlabel("h, number of selected features (log scale) \u00b1 \u03bb", style="italic")
        ax.set_ylabel("suit \u2663")
        ax.loglog([1, 10, 100], [1, 100, 10])
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(
            buf, format=fmt, **({"metadata": {"CreationDate": None}} if fmt == "pdf" else {})
        )
        plt.close(fig)
    return buf.getvalue()


def test_the_pngs_are_the_ones_dejavu_sans_draws(made):
    family, _ = made
    assert family[0] == "UFS Sans"
    assert _draw(family, "png") == _draw(["DejaVu Sans"], "png")


def test_a_pdf_embeds_the_cut_font_and_the_fallback_only_for_what_it_lacks(made):
    import re

    family, _ = made
    fonts_of = lambda pdf: set(re.findall(rb"/BaseFont /[A-Z]{6}\+([\w-]+)", pdf))  # noqa: E731
    cut = fonts_of(_draw(family, "pdf"))
    assert {b"UFSSans", b"UFSSans-Bold", b"UFSSans-Oblique"} <= cut
    assert b"DejaVuSans" in cut  # the suit sign, which the cut font does not have
    assert not {b"DejaVuSans-Bold", b"DejaVuSans-Oblique"} & cut
    assert b"UFSSans" not in fonts_of(_draw(["DejaVu Sans"], "pdf"))


def test_a_decorated_figure_maker_uses_the_cut_font(tmp_path):
    import matplotlib.pyplot as plt

    @fonts.in_figure_font
    def make():
        fig, ax = plt.subplots()
        ax.set_title("kmeans_ufs \u2020")
        fig.tight_layout()
        return fig

    fig = make()
    ax = fig.axes[0]
    ax.set_xticks([0.1, 0.2, 0.3])  # ticks made after it returned copy the first tick's font
    figures.save_figure(fig, tmp_path / "f.png", dpi=50)
    pdf = (tmp_path / "f.pdf").read_bytes()
    if fonts.font_family()[0] != fonts.FAMILY:
        pytest.skip("UFS Sans could not be made here (see the log)")
    assert b"+UFSSans" in pdf and b"+DejaVuSans" not in pdf
