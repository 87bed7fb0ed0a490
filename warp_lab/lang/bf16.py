"""bfloat16 on the host: Warp 1.19's float32 -> bfloat16 rounding and its arrays' numpy form.

The rule is Warp's ``wp_float_to_bfloat16_bits_sw`` (``warp/native/builtin.h``), which
its CPU device runs (``warp.cpp``'s ``wp_float_to_bfloat16_bits``): round to nearest, ties
to even, on the float32 bits; an inf or NaN is truncated, and a NaN whose top 7 mantissa
bits are all zero gets the quiet bit (``0x0040``) so that it stays a NaN. bfloat16 ->
float32 is exact (the bits shifted up 16). A float64 value is first rounded to float32
(Warp's ``wp_bfloat16(float)`` constructor), so there are two roundings, as in Warp.

Host arrays follow ``warp._src.types``: ``wp.array(...).numpy()`` of a bfloat16 array is
an ``ml_dtypes.bfloat16`` array when ml_dtypes is installed and ``uint16`` bit patterns
when it is not (:data:`NUMPY`); the array constructor takes uint16 bit patterns as they
are, ``ml_dtypes.bfloat16`` data as its bits, and anything else as numbers converted to
float32 and rounded (:func:`host_array`; with ml_dtypes, Warp rounds with it, which
makes every NaN ``0x7fc0``/``0xffc0``: so does this).
"""

from __future__ import annotations

import numpy as np

__all__ = ["NUMPY", "ML_DTYPES", "bits_from_f32", "f32_from_bits", "round_value",
           "host_array", "MAX"]

try:  # Warp's optional dependency (types._get_ml_dtypes_bfloat16)
    import ml_dtypes as _ml
    ML_DTYPES = np.dtype(_ml.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is installed with the dev tools
    ML_DTYPES = None

#: the numpy dtype of a bfloat16 array on the host (Warp's ``.numpy()``)
NUMPY = ML_DTYPES if ML_DTYPES is not None else np.dtype(np.uint16)

#: the largest finite bfloat16 (0x7f7f)
MAX = float(np.array(0x7F7F0000, np.uint32).view(np.float32))


def bits_from_f32(x) -> np.ndarray:
    """Warp's ``wp_float_to_bfloat16_bits_sw`` on each element.

    Args:
        x: array-like of numbers, converted to float32 first (numpy's round to nearest).

    Returns:
        A uint16 array of the same shape: the bfloat16 bit patterns.
    """
    with np.errstate(all="ignore"):
        f = np.asarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    special = (bits & 0x7F800000) == 0x7F800000
    h = bits >> 16
    quiet = special & ((bits & 0x007FFFFF) != 0) & ((h & 0x7F) == 0)
    h = np.where(quiet, h | 0x40, h)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    return np.where(special, h, rounded).astype(np.uint16)


def f32_from_bits(bits) -> np.ndarray:
    """bfloat16 bit patterns (uint16 array-like) as float32, exactly (Warp's
    ``wp_bfloat16_bits_to_float_sw``)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_value(value) -> float:
    """A Python number as the nearest bfloat16, as a Python float (via float32, as Warp's
    constructor does). Used to fold constants and for ``wl.bfloat16(x)`` on the host."""
    return float(f32_from_bits(bits_from_f32(np.float64(value)))[()])


def host_array(data) -> np.ndarray:
    """Host data for a bfloat16 array, in :data:`NUMPY`'s dtype (Warp's ``array.__init__``
    for ``dtype=wp.bfloat16``).

    Args:
        data: a uint16 numpy array (bit patterns, taken as they are), an
            ``ml_dtypes.bfloat16`` array, or numbers of any shape (lists, float arrays),
            converted to float32 and then rounded.

    Returns:
        A new numpy array of dtype :data:`NUMPY` (2 bytes per element).
    """
    if isinstance(data, np.ndarray) and data.dtype == np.uint16:
        bits = data.copy()
    elif isinstance(data, np.ndarray) and ML_DTYPES is not None and data.dtype == ML_DTYPES:
        bits = data.view(np.uint16).copy()
    elif ML_DTYPES is not None:
        with np.errstate(all="ignore"):
            bits = np.asarray(np.asarray(data, dtype=np.float32), dtype=ML_DTYPES).view(np.uint16)
    else:
        bits = bits_from_f32(data)
    return bits.view(NUMPY)
