"""The IDX file format (LeCun's MNIST format, also Fashion-MNIST's), gzip-compressed.

Layout (big-endian): two zero bytes, one type byte (0x08 unsigned byte, 0x09 signed
byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64), one byte with the number of
dimensions d, d 32-bit dimension sizes, then the values in row-major order. A file whose
magic, dimensions or length do not fit is refused with its name and what is wrong (a
truncated download, another format). Only the catalog imports this module, so the data
code version of the other data sets does not depend on it (:mod:`ufs.pipeline.lineage`).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

__all__ = ["read_idx"]

_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: str | Path) -> np.ndarray:
    """The array an IDX file holds (gzip-compressed when its name ends in ``.gz``), in
    native byte order. ``ValueError`` naming the file for a bad magic number, an unknown
    type, or a length that does not match the dimensions."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:  # a damaged gzip stream
        raise ValueError(f"{path}: not a readable IDX file ({exc})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (magic number {raw[:4].hex() or 'empty'})")
    dtype = _TYPES.get(raw[2])
    if dtype is None:
        raise ValueError(f"{path}: unknown IDX type byte 0x{raw[2]:02x}")
    ndim = raw[3]
    head = 4 + 4 * ndim
    if ndim == 0 or len(raw) < head:
        raise ValueError(f"{path}: IDX header of {ndim} dimensions is truncated")
    shape = tuple(int(d) for d in np.frombuffer(raw[4:head], dtype=">u4"))
    expected = head + dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    if len(raw) != expected:
        raise ValueError(
            f"{path}: IDX dimensions {shape} need {expected} bytes; the file has {len(raw)} "
            "(truncated or damaged)"
        )
    return (
        np.frombuffer(raw, dtype=dtype, offset=head).reshape(shape).astype(dtype.newbyteorder("="))
    )
