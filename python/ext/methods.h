/* The functions of voxa._voxa: VX_METHOD(name, docstring). Each is defined
 * in python/ext/py_<family>.c as vx_py_<name>(self, args, kwargs). */
VX_METHOD(read, "read(path) -> (bytes-like buffer, dtype name, shape)")
VX_METHOD(write, "write(path, array): write .npy or TIFF atomically")
VX_METHOD(set_threads, "set_threads(n): number of worker threads (0 = default)")
VX_METHOD(get_threads, "get_threads() -> n")
VX_METHOD(version, "version() -> str")
VX_METHOD(tiff_write, "tiff_write(path, array, compression=0, level=0, bigtiff_above=0)")
VX_METHOD(csv_parse, "csv_parse(data) -> (names, float64 bytearray, nrows)")
VX_METHOD(csv_read, "csv_read(path) -> (names, float64 bytearray, nrows)")
VX_METHOD(read_array, "read_array(path) -> (buffer owning the data, dtype name, shape, fortran)")
