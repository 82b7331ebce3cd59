/* The functions of voxa._voxa: VX_METHOD(name, docstring). Each is defined
 * in python/ext/py_<family>.c as vx_py_<name>(self, args, kwargs). */
VX_METHOD(read, "read(path) -> (bytes-like buffer, dtype name, shape)")
VX_METHOD(write, "write(path, array): write .npy or TIFF atomically")
VX_METHOD(set_threads, "set_threads(n): number of worker threads (0 = default)")
VX_METHOD(get_threads, "get_threads() -> n")
VX_METHOD(version, "version() -> str")
VX_METHOD(roi_extract, "roi_extract(image, coords, size, centered, mode, cval, out): patches into out")
VX_METHOD(roi_paste, "roi_paste(volume, patches, coords, size, centered, mode, op): paste in place")
