/* The functions of voxa._voxa: VX_METHOD(name, docstring). Each is defined
 * in python/ext/py_<family>.c as vx_py_<name>(self, args, kwargs). */
VX_METHOD(read, "read(path) -> (bytes-like buffer, dtype name, shape)")
VX_METHOD(write, "write(path, array): write .npy or TIFF atomically")
VX_METHOD(set_threads, "set_threads(n): number of worker threads (0 = default)")
VX_METHOD(get_threads, "get_threads() -> n")
VX_METHOD(version, "version() -> str")
VX_METHOD(deconv_rl, "deconv_rl(image, psf, out, boundary='free', num_iter=20, clip=False, filter_epsilon=0, accelerate=False, progress=None, measure=False): Richardson-Lucy into out")
VX_METHOD(psf_gaussian, "psf_gaussian(out, sigma): normalised Gaussian PSF centred at shape//2")
VX_METHOD(rl_fft_floor, "rl_fft_floor(shape, reps=3, measure=False) -> list of seconds for r2c,c2r,r2c,c2r (benchmark hook)")
VX_METHOD(deconv_wisdom, "deconv_wisdom(path, save=False): load or save FFTW wisdom (measured plans)")
