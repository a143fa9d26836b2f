"""The .npy reader and writer of launch files agree with numpy's own (numpy: a test dependency only)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from mbarrier.sim import npy


@pytest.mark.parametrize("arr", [np.arange(12, dtype="<f4").reshape(3, 4), np.arange(5, dtype=">i8"),
                                 np.zeros((2, 0, 3), dtype="|u1"), np.array(7, dtype="<f2"),
                                 np.arange(6, dtype="<u2").reshape(3, 2).T.copy()])
def test_reads_what_numpy_saves(arr: np.ndarray) -> None:
    f = io.BytesIO()
    np.save(f, arr)
    body, dtype, shape = npy.read(f.getvalue())
    assert (body, dtype, shape) == (arr.tobytes(), arr.dtype.str, arr.shape)


def test_numpy_loads_what_it_writes() -> None:
    data = np.arange(24, dtype="<i4").tobytes()
    arr = np.load(io.BytesIO(npy.write(data, "int32", (2, 3, 4))))
    assert arr.dtype.str == "<i4" and arr.shape == (2, 3, 4) and arr.tobytes() == data
    flat = np.load(io.BytesIO(npy.write(data, "<u2")))
    assert flat.shape == (48,)


def test_refuses_what_it_cannot_take() -> None:
    f = io.BytesIO()
    np.save(f, np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
    with pytest.raises(npy.NpyError, match="Fortran order"):
        npy.read(f.getvalue())
    with pytest.raises(npy.NpyError, match="magic"):
        npy.read(b"PK\x03\x04")
    f = io.BytesIO()
    np.save(f, np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
    with pytest.raises(npy.NpyError, match="plain numbers"):
        npy.read(f.getvalue())
    with pytest.raises(npy.NpyError, match="not a whole number"):
        npy.write(b"\0" * 6, "<f4")
    with pytest.raises(npy.NpyError, match="holds 6 items"):
        npy.write(b"\0" * 32, "<f4", (2, 3))
    with pytest.raises(npy.NpyError, match="expected a numpy type string"):
        npy.typestr("bfloat16")
