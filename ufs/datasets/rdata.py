"""A small reader of R data files (``.rda`` / ``.RData``) holding vectors and data frames.

R's ``save()`` writes a *serialization* (R Internals, §1.8 "Serialization formats"; R's
``src/main/serialize.c``) of a tagged pair list — one element per saved object, tagged with
its name — usually compressed with gzip, bzip2 or xz. This module reads the **XDR** (binary
big-endian) form, format versions 2 and 3 (magic ``RDX2`` / ``RDX3``), and only the
object kinds a data frame of numbers and factors is made of:

* ``NULL``; symbols; pair lists (``LISTSXP``: attributes and tagged elements);
* character strings (``CHARSXP``, ``NA_character_`` as ``None``) and character vectors;
* logical, integer and double vectors (``NA_integer_`` = −2³¹; ``NA_real_`` is a NaN);
* generic vectors (lists, hence data frames); references to earlier symbols;
* the compact integer / real sequences and wrappers of R ≥ 3.5 (``ALTREP``), expanded;
* external pointers, which R saves as a null address (data.table's ``.internal.selfref``
  attribute is one): skipped.

Anything else (environments, functions, language objects, external pointers, byte code,
the ASCII or native-binary forms) is refused with a ``ValueError`` naming the file and the
kind found, as is a file that is not an R serialization at all. Nothing is evaluated: the
reader only decodes numbers and strings.

:func:`read_rdata` returns ``{name: value}``: a data frame (an R list with class
``data.frame``) becomes a ``dict`` column name → NumPy array or :class:`RFactor`, in column
order; a factor an :class:`RFactor`; other vectors an :class:`RVector` (values and
attributes). It is what :func:`ufs.datasets.readers.read_rda_frame` needs for the NIR
spectra of ``meats.rda`` (an xz-compressed version-2 file holding one data.table: 1050
numeric columns and one factor), not a general R reader.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RFactor", "RVector", "read_rdata", "parse_serialized"]

# SEXP types (R's Rinternals.h) and the serialization's special codes (serialize.c)
_NILSXP, _SYMSXP, _LISTSXP, _CHARSXP = 0, 1, 2, 9
_LGLSXP, _INTSXP, _REALSXP, _STRSXP, _VECSXP = 10, 13, 14, 16, 19
_EXTPTRSXP, _ALTREP_SXP, _REFSXP, _NILVALUE_SXP = 22, 238, 255, 254
_SPECIAL = {
    253: "the global environment",
    252: "an unbound value",
    251: "a missing argument",
    250: "the base namespace",
    249: "a namespace",
    248: "a package environment",
    247: "a persistent reference",
    246: "a class reference",
    245: "a generic reference",
    244: "byte code",
    242: "the empty environment",
    241: "the base environment",
    240: "a language object with attributes",
    239: "a pair list with attributes (old form)",
}
_KINDS = {
    3: "a function (closure)",
    4: "an environment",
    5: "a promise",
    6: "a language object",
    7: "a special function",
    8: "a builtin function",
    15: "a complex vector",
    17: "a dots object",
    20: "an expression vector",
    21: "byte code",
    23: "a weak reference",
    24: "a raw vector",
    25: "an S4 object",
}
_IS_OBJECT, _HAS_ATTR, _HAS_TAG = 1 << 8, 1 << 9, 1 << 10
_LATIN1, _UTF8 = 1 << 2, 1 << 3
NA_INTEGER = -(2**31)


@dataclass
class RVector:
    """An R vector: its values (NumPy array, or a list for character and generic vectors)
    and its attributes (name → value)."""

    values: Any
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class RFactor:
    """An R factor: 1-based ``codes`` into ``levels`` (``NA_integer_`` for a missing value)."""

    codes: np.ndarray
    levels: list[str]

    def labels(self) -> np.ndarray:
        """The level name of every element (``ValueError`` on a missing or invalid code)."""
        codes = np.asarray(self.codes, dtype=np.int64)
        if codes.size and (codes.min() < 1 or codes.max() > len(self.levels)):
            raise ValueError(
                f"factor codes outside 1..{len(self.levels)} (NA or a damaged file): "
                f"{sorted(set(codes[(codes < 1) | (codes > len(self.levels))].tolist()))[:5]}"
            )
        return np.asarray(self.levels, dtype=object)[codes - 1].astype(str)


class _Stream:
    """The XDR items of one serialization, read in order."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data, self.pos, self.where = data, 0, where
        self.refs: list[Any] = []

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"{self.where}: truncated R serialization (at byte {self.pos})")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def length(self) -> int:
        n = self.int()
        if n == -1:  # a long vector: two more ints
            upper, lower = struct.unpack(">II", self.take(8))
            n = (upper << 32) + lower
        if n < 0:
            raise ValueError(f"{self.where}: negative vector length {n} (damaged file)")
        return n

    def array(self, dtype: str, n: int) -> np.ndarray:
        itemsize = np.dtype(dtype).itemsize
        return np.frombuffer(self.take(itemsize * n), dtype=dtype).astype(dtype[1:])

    # -- items ---------------------------------------------------------------------
    def item(self) -> Any:
        flags = self.int()
        kind = flags & 0xFF
        if kind == _NILVALUE_SXP or kind == _NILSXP:
            return None
        if kind == _REFSXP:
            index = flags >> 8 or self.int()
            if not 1 <= index <= len(self.refs):
                raise ValueError(f"{self.where}: reference {index} to an unknown object")
            return self.refs[index - 1]
        if kind in _SPECIAL:
            raise ValueError(
                f"{self.where}: holds {_SPECIAL[kind]}, which this reader does not read"
            )
        if kind == _SYMSXP:
            name = self.item()
            symbol = _Symbol(str(name))
            self.refs.append(symbol)
            return symbol
        if kind == _LISTSXP:
            return self._pairlist(flags)
        if kind == _CHARSXP:
            n = self.int()
            if n == -1:
                return None  # NA_character_
            raw = self.take(n)
            return raw.decode("latin-1" if (flags >> 12) & _LATIN1 else "utf-8", "replace")
        if kind == _ALTREP_SXP:
            return self._altrep()
        if kind == _EXTPTRSXP:  # e.g. data.table's ".internal.selfref": a null address
            pointer = _ExternalPointer()
            self.refs.append(pointer)
            self.item()  # its protected value
            self.item()  # its tag
            if flags & _HAS_ATTR:
                self._attributes()
            return pointer
        if kind in (_LGLSXP, _INTSXP):
            values: Any = self.array(">i4", self.length())
        elif kind == _REALSXP:
            values = self.array(">f8", self.length())
        elif kind == _STRSXP:
            values = [self._string() for _ in range(self.length())]
        elif kind == _VECSXP:
            values = [self.item() for _ in range(self.length())]
        else:
            what = _KINDS.get(kind, f"an object of SEXP type {kind}")
            raise ValueError(f"{self.where}: holds {what}, which this reader does not read")
        attributes = self._attributes() if flags & _HAS_ATTR else {}
        return _wrap(kind, values, attributes, self.where)

    def _string(self) -> str | None:
        flags = self.int()
        if flags & 0xFF != _CHARSXP:
            raise ValueError(f"{self.where}: a character vector element is not a string")
        n = self.int()
        if n == -1:
            return None
        raw = self.take(n)
        return raw.decode("latin-1" if (flags >> 12) & _LATIN1 else "utf-8", "replace")

    def _pairlist(self, flags: int) -> list[tuple[str | None, Any]]:
        """A pair list as ``[(tag, value), …]`` (read iteratively along its CDRs)."""
        out: list[tuple[str | None, Any]] = []
        while True:
            if flags & _HAS_ATTR:
                self.item()  # a pair list's own attributes: not needed
            tag = self.item() if flags & _HAS_TAG else None
            out.append((None if tag is None else str(tag), self.item()))
            flags = self.int()
            kind = flags & 0xFF
            if kind == _NILVALUE_SXP:
                return out
            if kind != _LISTSXP:
                raise ValueError(f"{self.where}: a pair list ends in SEXP type {kind}")

    def _attributes(self) -> dict[str, Any]:
        flags = self.int()
        if flags & 0xFF != _LISTSXP:
            raise ValueError(f"{self.where}: attributes are not a pair list")
        return {str(tag): value for tag, value in self._pairlist(flags)}

    def _altrep(self) -> Any:
        """R ≥ 3.5's compact sequences and wrappers, expanded to plain vectors."""
        info = self.item()
        state = self.item()
        attributes = self.item()
        cls = str(info[0][1]) if isinstance(info, list) and info else "?"
        attrs = {str(t): v for t, v in attributes} if isinstance(attributes, list) else {}
        if cls in ("compact_intseq", "compact_realseq"):
            n, start, step = (float(v) for v in _values(state)[:3])
            seq = start + step * np.arange(int(n))
            values = seq.astype(np.int32) if cls == "compact_intseq" else seq
            return _wrap(
                _INTSXP if cls == "compact_intseq" else _REALSXP, values, attrs, self.where
            )
        if cls.startswith("wrap_") and isinstance(state, list) and state:
            inner = state[0][1]
            if isinstance(inner, RVector) and attrs:
                inner.attributes.update(attrs)
            return inner
        raise ValueError(f"{self.where}: holds an ALTREP object of class {cls!r}, not read")


class _Symbol(str):
    """An R symbol (a name)."""


class _ExternalPointer:
    """An R external pointer: a C address, saved as null (nothing to read)."""


def _values(obj: Any) -> Any:
    return obj.values if isinstance(obj, RVector) else obj


def _wrap(kind: int, values: Any, attributes: dict[str, Any], where: str) -> Any:
    """A vector as :class:`RVector`, a factor as :class:`RFactor`, a data frame as a dict."""
    classes = [str(c) for c in _values(attributes.get("class")) or []]
    if kind == _INTSXP and "factor" in classes:
        levels = [str(v) for v in _values(attributes.get("levels")) or []]
        return RFactor(np.asarray(values, dtype=np.int32), levels)
    if kind == _VECSXP and "data.frame" in classes:
        names = [str(v) for v in _values(attributes.get("names")) or []]
        if len(names) != len(values):
            raise ValueError(
                f"{where}: a data frame with {len(values)} columns and {len(names)} names"
            )
        columns: dict[str, Any] = {}
        for name, column in zip(names, values, strict=True):
            columns[name] = column if isinstance(column, RFactor) else _column(column, name, where)
        lengths = {len(c.codes) if isinstance(c, RFactor) else len(c) for c in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"{where}: data frame columns of different lengths {sorted(lengths)}")
        return columns
    return RVector(values, attributes)


def _column(column: Any, name: str, where: str) -> np.ndarray:
    """A data frame's non-factor column as a NumPy array (integer NA as NaN)."""
    values = _values(column)
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "i" and (values == NA_INTEGER).any():
            values = np.where(values == NA_INTEGER, np.nan, values.astype(np.float64))
        return values
    return np.asarray(values, dtype=object)  # a character or list column


def _decompress(raw: bytes, where: str) -> bytes:
    """``raw`` without its gzip, bzip2 or xz compression (uncompressed data as it is)."""
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:3] == b"BZh":
            return bz2.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        raise ValueError(f"{where}: a damaged compressed R data file ({exc})") from None
    return raw


def parse_serialized(data: bytes, where: str = "<bytes>") -> Any:
    """The object of one XDR R serialization (``X\\n`` then the version header), as
    :func:`read_rdata` decodes it."""
    if data[:2] != b"X\n":
        form = {b"A\n": "ASCII", b"B\n": "native binary"}.get(data[:2])
        raise ValueError(
            f"{where}: an R serialization in {form} form; only the XDR form is read"
            if form
            else f"{where}: not an XDR R serialization"
        )
    stream = _Stream(data, where)
    stream.take(2)
    version = stream.int()
    stream.int()  # the R version that wrote it
    stream.int()  # the oldest R version that reads it
    if version == 3:
        stream.take(stream.int())  # the native encoding's name
    elif version != 2:
        raise ValueError(f"{where}: R serialization format version {version}; 2 and 3 are read")
    return stream.item()


def read_rdata(path: str | Path) -> dict[str, Any]:
    """The objects saved in the R data file ``path`` (``save()``'s ``.rda`` / ``.RData``,
    gzip, bzip2, xz or not compressed): name → value as described in the module
    docstring. ``ValueError`` naming the file for anything else."""
    path = Path(path)
    data = _decompress(path.read_bytes(), str(path))
    if data[:5] not in (b"RDX2\n", b"RDX3\n"):
        form = {b"RDA2\n": "ASCII", b"RDA3\n": "ASCII", b"RDB2\n": "binary", b"RDB3\n": "binary"}
        kind = form.get(data[:5])
        raise ValueError(
            f"{path}: an R data file in {kind} form; only the XDR form (save()'s default) is read"
            if kind
            else f"{path}: not an R data file (starts with {data[:5]!r}, expected 'RDX2' or 'RDX3')"
        )
    top = parse_serialized(data[5:], str(path))
    if not isinstance(top, list) or any(tag is None for tag, _ in top):
        raise ValueError(f"{path}: the saved objects are not a tagged pair list")
    return {tag: value for tag, value in top}
