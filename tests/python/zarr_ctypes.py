"""ctypes access to libvoxa's Zarr C API (include/voxa/zarr.h), for the Zarr
interop tests and the Zarr benchmark: the Python extension exposes only
whole-array imread/imwrite, these tests need every option and regions."""
import ctypes as C
import os

import numpy as np

MAXDIM = 8
DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
          "float32", "float64"]
CODECS = {"blosc": 0, "raw": 1, "zstd": 2, "gzip": 3, "zlib": 4}


class Options(C.Structure):
    _fields_ = [("format", C.c_int), ("chunks", C.c_int64 * MAXDIM),
                ("shards", C.c_int64 * MAXDIM), ("codec", C.c_int), ("level", C.c_int),
                ("blosc_cname", C.c_char_p), ("blosc_shuffle", C.c_int),
                ("big_endian", C.c_int), ("fortran_order", C.c_int),
                ("fill_value", C.c_double), ("separator", C.c_char), ("fsync", C.c_int),
                ("dimension_names", C.c_void_p)]


class Array(C.Structure):
    _fields_ = [("data", C.c_void_p), ("dtype", C.c_int), ("ndim", C.c_int),
                ("shape", C.c_int64 * MAXDIM), ("strides", C.c_int64 * MAXDIM),
                ("owner", C.c_void_p)]


class Info(C.Structure):
    _fields_ = [("format", C.c_int), ("dtype", C.c_int), ("ndim", C.c_int),
                ("shape", C.c_int64 * MAXDIM), ("chunks", C.c_int64 * MAXDIM),
                ("write_unit", C.c_int64 * MAXDIM), ("sharded", C.c_int),
                ("big_endian", C.c_int), ("fortran_order", C.c_int),
                ("fill_value", C.c_double)]


class VoxaError(Exception):
    def __init__(self, code, msg):
        super().__init__(f"{code}: {msg}")
        self.code, self.msg = code, msg


def load(build_dir):
    lib = C.CDLL(os.path.join(build_dir, "libvoxa.so"))
    lib.voxa_last_error.restype = C.c_char_p
    lib.voxa_zarr_open.argtypes = [C.c_char_p, C.c_int, C.POINTER(C.c_void_p)]
    lib.voxa_zarr_create.argtypes = [C.c_char_p, C.c_int, C.c_int, C.POINTER(C.c_int64),
                                     C.POINTER(Options), C.POINTER(C.c_void_p)]
    lib.voxa_zarr_close.argtypes = [C.c_void_p]
    lib.voxa_zarr_close.restype = None
    lib.voxa_zarr_read.argtypes = [C.c_void_p, C.POINTER(C.c_int64), C.POINTER(Array)]
    lib.voxa_zarr_write.argtypes = [C.c_void_p, C.POINTER(C.c_int64), C.POINTER(Array)]
    lib.voxa_zarr_get_info.argtypes = [C.c_void_p, C.POINTER(Info)]
    lib.voxa_zarr_write_ome.argtypes = [C.c_char_p, C.POINTER(Array), C.POINTER(C.c_double),
                                        C.c_char_p, C.c_int, C.c_int, C.POINTER(Options)]
    lib.voxa_zarr_spacing.argtypes = [C.c_char_p, C.c_int, C.POINTER(C.c_double), C.c_char_p,
                                      C.c_size_t]
    return Zarr(lib)


def _view(a):
    v = Array()
    v.data = a.ctypes.data
    v.dtype = DTYPES.index(a.dtype.name)
    v.ndim = a.ndim
    for d in range(a.ndim):
        v.shape[d] = a.shape[d]
        v.strides[d] = a.strides[d]
    return v


def _i64(seq):
    seq = list(seq)
    return (C.c_int64 * max(1, len(seq)))(*seq)


class Zarr:
    def __init__(self, lib):
        self.lib = lib

    def _check(self, st):
        if st != 0:
            raise VoxaError(st, self.lib.voxa_last_error().decode())

    def options(self, format=3, chunks=None, shards=None, codec="blosc", level=0, cname=None,
                shuffle=0, big_endian=False, order="C", fill_value=0.0, separator=None,
                fsync=False):
        o = Options()
        o.format = format
        for d, c in enumerate(chunks or ()):
            o.chunks[d] = c
        for d, s in enumerate(shards or ()):
            o.shards[d] = s
        o.codec = CODECS[codec]
        o.level = level
        o.blosc_cname = cname.encode() if cname else None
        o.blosc_shuffle = shuffle
        o.big_endian = int(big_endian)
        o.fortran_order = int(order == "F")
        o.fill_value = fill_value
        o.separator = separator.encode() if separator else b"\0"
        o.fsync = int(fsync)
        return o

    def create(self, path, shape, dtype, **kw):
        h = C.c_void_p()
        o = self.options(**kw)
        self._check(self.lib.voxa_zarr_create(os.fsencode(path), DTYPES.index(np.dtype(dtype).name),
                                              len(shape), _i64(shape), C.byref(o), C.byref(h)))
        return h

    def open(self, path, writable=False):
        h = C.c_void_p()
        self._check(self.lib.voxa_zarr_open(os.fsencode(path), int(writable), C.byref(h)))
        return h

    def close(self, h):
        self.lib.voxa_zarr_close(h)

    def info(self, h):
        i = Info()
        self._check(self.lib.voxa_zarr_get_info(h, C.byref(i)))
        return i

    def write(self, h, a, lo=None):
        a = np.asarray(a)
        v = _view(a)
        self._check(self.lib.voxa_zarr_write(h, _i64(lo or [0] * a.ndim), C.byref(v)))

    def read(self, h, lo, shape, dtype, out=None):
        out = np.empty(shape, dtype) if out is None else out
        v = _view(out)
        self._check(self.lib.voxa_zarr_read(h, _i64(lo), C.byref(v)))
        return out

    def save(self, path, a, **kw):
        """Create an array at `path` and write `a` into it, whole."""
        a = np.asarray(a)
        h = self.create(path, a.shape, a.dtype, **kw)
        try:
            self.write(h, a)
        finally:
            self.close(h)

    def load(self, path):
        h = self.open(path)
        try:
            i = self.info(h)
            shape = tuple(i.shape[d] for d in range(i.ndim))
            return self.read(h, [0] * i.ndim, shape, DTYPES[i.dtype])
        finally:
            self.close(h)

    def write_ome(self, path, a, spacing=None, unit=None, levels=1, labels=False, **kw):
        a = np.asarray(a)
        v = _view(a)
        sp = (C.c_double * a.ndim)(*spacing) if spacing is not None else None
        o = self.options(**kw)
        self._check(self.lib.voxa_zarr_write_ome(os.fsencode(path), C.byref(v), sp,
                                                 unit.encode() if unit else None, levels,
                                                 int(labels), C.byref(o)))

    def spacing(self, path, ndim):
        sp = (C.c_double * ndim)()
        unit = C.create_string_buffer(64)
        self._check(self.lib.voxa_zarr_spacing(os.fsencode(path), ndim, sp, unit, 64))
        return list(sp), unit.value.decode()
