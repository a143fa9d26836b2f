"""NumPy's .npy files (format versions 1.0 to 3.0) read and written without numpy: a launch's buffers
are bytes, so a file is its header (dtype, order, shape) and the array's bytes in C order.

Reading takes any array of plain numbers (a dtype such as `<f4`, `|u1`, `>i8`) stored in C order;
a Fortran-ordered or object array is refused with what to do. Writing makes a version 1.0 file that
`numpy.load` reads back.
"""

from __future__ import annotations

import ast as pyast
import re

MAGIC = b"\x93NUMPY"
# A numpy type string: byte order, kind (bool, signed, unsigned, float, complex), item size.
_TYPESTR = re.compile(r"[<>|=]?[biufc]\d+")
#: Type names a launch file may give for an output, as their type strings (little-endian).
NAMES = {
    "bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
    "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8",
}


class NpyError(ValueError):
    """Not a .npy file this reader takes, or a dtype it cannot write."""


def typestr(dtype: str) -> str:
    """A dtype as a numpy type string: `float32` -> `<f4`; `<f4` as it is."""
    t = NAMES.get(dtype, dtype)
    if not _TYPESTR.fullmatch(t):
        raise NpyError(f"dtype {dtype!r}: expected a numpy type string such as '<f4' or a name such as "
                       f"float32 ({', '.join(NAMES)})")
    return t


def itemsize(dtype: str) -> int:
    return int(typestr(dtype).lstrip("<>|=")[1:])


def read(data: bytes) -> tuple[bytes, str, tuple[int, ...]]:
    """The array's bytes, its type string and its shape."""
    if data[:6] != MAGIC or len(data) < 10:
        raise NpyError("not a .npy file (no \\x93NUMPY magic)")
    major = data[6]
    if major == 1:
        hlen, start = int.from_bytes(data[8:10], "little"), 10
    elif major in (2, 3):
        hlen, start = int.from_bytes(data[8:12], "little"), 12
    else:
        raise NpyError(f".npy format version {major}.{data[7]} is not known")
    try:
        header = pyast.literal_eval(data[start:start + hlen].decode("latin1" if major < 3 else "utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError):
        raise NpyError("the .npy header is not a Python literal") from None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise NpyError("the .npy header lacks descr, fortran_order or shape")
    descr, shape = header["descr"], header["shape"]
    if not isinstance(descr, str) or not _TYPESTR.fullmatch(descr):
        raise NpyError(f"dtype {descr!r}: only arrays of plain numbers are taken (not records or objects)")
    if header["fortran_order"]:
        raise NpyError("the array is in Fortran order: save it with numpy.ascontiguousarray first")
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise NpyError(f"shape {shape!r} is not a tuple of sizes")
    count = 1
    for n in shape:
        count *= n
    body = data[start + hlen:]
    need = count * itemsize(descr)
    if len(body) < need:
        raise NpyError(f"the file holds {len(body)} bytes of data; shape {shape} of {descr} needs {need}")
    return body[:need], descr, shape


def write(data: bytes, dtype: str, shape: tuple[int, ...] | None = None) -> bytes:
    """A version 1.0 .npy file of these bytes as `dtype`, of `shape` (default: flat)."""
    t = typestr(dtype)
    size = itemsize(t)
    if len(data) % size:
        raise NpyError(f"{len(data)} bytes are not a whole number of {t} items")
    count = len(data) // size
    if shape is None:
        shape = (count,)
    total = 1
    for n in shape:
        total *= n
    if total != count:
        raise NpyError(f"shape {list(shape)} holds {total} items of {t}; the buffer has {count}")
    header = repr({"descr": t, "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    pad = -(len(MAGIC) + 4 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    return MAGIC + b"\x01\x00" + len(header).to_bytes(2, "little") + header + data
