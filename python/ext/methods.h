/* The functions of voxa._voxa: VX_METHOD(name, docstring). Each is defined
 * in python/ext/py_<family>.c as vx_py_<name>(self, args, kwargs). */
VX_METHOD(read, "read(path) -> (bytes-like buffer, dtype name, shape)")
VX_METHOD(write, "write(path, array): write .npy or TIFF atomically")
VX_METHOD(set_threads, "set_threads(n): number of worker threads (0 = default)")
VX_METHOD(get_threads, "get_threads() -> n")
VX_METHOD(version, "version() -> str")
VX_METHOD(edt, "edt(input, out, indices, spacing, squared): Euclidean distance transform into out (and indices)")
VX_METHOD(cdt, "cdt(input, out, metric): taxicab (1) or chessboard (2) distance transform into int32 out")
VX_METHOD(morph, "morph(op, input, out, kind, radius, spacing, box, connectivity, footprint, iterations, border_value)")
VX_METHOD(morph_element, "morph_element(ndim, kind, radius, spacing, box, connectivity) -> (bytearray, shape)")
VX_METHOD(morph_describe, "morph_describe(ndim, kind, radius, spacing, box, connectivity, footprint, iterations) -> str")
