"""The figures' font: DejaVu Sans (matplotlib's default) cut down to the characters the
figures write, so that a PDF embeds its fonts cheaply.

A PDF twin embeds its fonts as TrueType subsets (:func:`ufs.report.figures.save_figure`).
To cut one, matplotlib has fontTools parse the whole font file — DejaVu Sans has ~6 000
glyphs — once per font and PDF, 65-145 ms each: ~1 CPU-s of a data set's four figures, a
fifth of their CPU. Cutting the same subset from a font of the 367 glyphs the
figures can use takes 17-23 ms.

:func:`font_family` makes that font once per machine: **UFS Sans**, the four faces of the
DejaVu Sans that matplotlib ships, cut by fontTools (matplotlib's own dependency) to
:data:`CHARACTERS`, every glyph outline, metric, hinting and layout table (kerning,
ligatures) of those characters kept as they are. Only the family name changes: DejaVu
Sans is under the Bitstream Vera licence, which allows modified copies under another name
without "Bitstream" or "Vera"; the copyright and licence records stay. The files are made
on the user's machine from their matplotlib's copy, never shipped with the project, in
matplotlib's cache folder (``<cachedir>/ufs-fonts/<key>``, written atomically; the key is
the source files' digest, :data:`CHARACTERS` and fontTools' version).

The figures then ask for ``["UFS Sans", "DejaVu Sans"]``: the same glyphs at the same
places — the PNGs are byte for byte the ones DejaVu Sans draws (tested) — and any
character outside :data:`CHARACTERS` falls back to DejaVu Sans itself. Mathtext keeps
its own fonts (``mathtext.fontset``). If the font cannot be made (no DejaVu Sans file, a
cache folder that cannot be written, a fontTools error), the figures use DejaVu Sans, as
before, and :func:`font_family` says why once on the log.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

FAMILY = "UFS Sans"
SOURCE_FAMILY = "DejaVu Sans"

#: ASCII, Latin-1, Greek (parameter names such as λ), and the typographic and
#: mathematical marks the figures and captions use (†, ◊, —, −, ±, ≤, …)
CHARACTERS = (
    "".join(chr(c) for c in range(0x20, 0x7F))
    + "".join(chr(c) for c in range(0xA0, 0x100))
    + "".join(chr(c) for c in range(0x391, 0x3CA) if c != 0x3A2)
    + "\u2010\u2011\u2012\u2013\u2014\u2018\u2019\u201c\u201d\u2020\u2021\u2022\u2026"
    + "\u2030\u2032\u2033\u2190\u2191\u2192\u2193\u2194\u2202\u2206\u2208\u2211\u2212"
    + "\u221a\u221e\u2225\u2227\u2228\u2248\u2260\u2261\u2264\u2265\u22c5\u25a0\u25a1"
    + "\u25b2\u25b3\u25bc\u25bd\u25c6\u25c7\u25ca\u25cb\u25cf\u2605\u2713\u2717"
)

#: the faces made, as matplotlib ships them (``mpl-data/fonts/ttf``)
FACES = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSans-BoldOblique.ttf",
)
#: name records that carry the family's name (family, unique id, full name, PostScript
#: name, typographic family, WWS family, PostScript CID name); the others (copyright,
#: licence, trademark, designer, ...) stay as they are
_NAME_IDS = (1, 3, 4, 6, 16, 18, 20, 21)
_VERSION = "1"  # of how the files are made: a change makes new files

_log = logging.getLogger(__name__)
_F = TypeVar("_F", bound=Callable)


def _key(sources: list[Path]) -> str:
    import fontTools

    h = hashlib.sha256(f"{_VERSION}\n{fontTools.version}\n{CHARACTERS}\n".encode())
    for src in sources:
        h.update(src.name.encode() + b"\0" + hashlib.sha256(src.read_bytes()).digest())
    return h.hexdigest()[:16]


def _renamed(text: str) -> str:
    return text.replace(SOURCE_FAMILY, FAMILY).replace(
        SOURCE_FAMILY.replace(" ", ""), FAMILY.replace(" ", "")
    )


def make_face(source: str | Path, target: str | Path) -> None:
    """Write ``source`` (a DejaVu Sans face) cut to :data:`CHARACTERS` and renamed
    :data:`FAMILY` to ``target``, atomically."""
    from fontTools import subset

    from ..fileio import write_with

    options = subset.Options()
    options.layout_features = ["*"]  # kerning and ligatures as the full font's
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.hinting = True
    options.notdef_outline = True
    options.glyph_names = True
    options.drop_tables += ["FFTM"]  # FontForge's timestamp, which fontTools cannot cut
    font = subset.load_font(str(source), options)
    cutter = subset.Subsetter(options)
    cutter.populate(text=CHARACTERS)
    cutter.subset(font)
    for record in font["name"].names:
        if record.nameID in _NAME_IDS:
            record.string = _renamed(record.toUnicode())
    write_with(target, lambda tmp: font.save(str(tmp)))


def source_folder() -> Path:
    """Where matplotlib keeps the DejaVu Sans faces (:data:`FACES`) it ships."""
    import matplotlib as mpl

    return Path(mpl.get_data_path()) / "fonts" / "ttf"


@functools.cache
def font_family() -> list[str]:
    """The figures' ``font.family``: ``[FAMILY, SOURCE_FAMILY]`` once UFS Sans is made
    (or found in the cache) and registered with matplotlib's font manager; else
    ``[SOURCE_FAMILY]`` (the reason on the log). Once per process."""
    import matplotlib as mpl
    from matplotlib import font_manager

    cache = Path(mpl.get_cachedir()) / "ufs-fonts"
    try:
        sources = [source_folder() / name for name in FACES]
        cache = cache / _key(sources)
        for src in sources:
            target = cache / _renamed(src.name)
            if not target.is_file():
                make_face(src, target)
            try:
                font_manager.fontManager.addfont(str(target))
            except (OSError, RuntimeError, ValueError):  # a damaged copy: made again, once
                make_face(src, target)
                font_manager.fontManager.addfont(str(target))
    except Exception as exc:  # noqa: BLE001 - any failure: the full font, as before
        _log.warning(
            "figures use %s, not its cut copy %s (%s: %s); their PDFs cost more. Deleting %s "
            "makes the copy again.",
            SOURCE_FAMILY,
            FAMILY,
            type(exc).__name__,
            exc,
            cache,
        )
        return [SOURCE_FAMILY]
    return [FAMILY, SOURCE_FAMILY]


def in_figure_font(func: _F) -> _F:
    """Decorator: ``func`` makes its figures in :func:`font_family` (a text's font is fixed
    when it is made; a tick made while drawing copies the first tick's)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import matplotlib as mpl

        with mpl.rc_context({"font.family": font_family()}):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
