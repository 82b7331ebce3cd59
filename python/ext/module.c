/* The voxa._voxa module. Ops are reached through the generic functions
 * (run_op and friends, py_op.c; the registry as data, py_registry.c), so
 * adding an op adds nothing here; the other functions are not ops (I/O,
 * threads, FFTW plans and wisdom, element arrays). */
#include "common.h"

#define VX_METHODS(X)                                                                            \
    X(run_op, "run_op(name, input, output, progress=None, **params) -> count or None: run an "  \
              "op of the registry on input (None for ops without one) into output")              \
    X(ops, "ops() -> list of dicts: every op with its summary, parameters (type, default, "     \
           "help, choices, flags) and flags")                                                   \
    X(op_halo, "op_halo(name, ndim, **params) -> (lo, hi): input voxels an output region "       \
               "needs per axis")                                                                 \
    X(op_output, "op_output(name, input, **params) -> (dtype name, shape) of the output")       \
    X(op_describe, "op_describe(name, input, **params) -> the algorithm chosen, or None")       \
    X(write, "write(path, array): write .npy or TIFF atomically")                              \
    X(set_threads, "set_threads(n): number of worker threads (0 = default)")                   \
    X(get_threads, "get_threads() -> n")                                                         \
    X(version, "version() -> str")                                                               \
    X(tiff_write, "tiff_write(path, array, compression=0, level=0, bigtiff_above=0)")           \
    X(csv_parse, "csv_parse(data) -> (names, float64 bytearray, nrows)")                        \
    X(csv_read, "csv_read(path) -> (names, float64 bytearray, nrows)")                          \
    X(read_array, "read_array(path) -> (buffer owning the data, dtype name, shape, fortran)")   \
    X(psf_gaussian, "psf_gaussian(out, sigma): normalised Gaussian PSF centred at shape//2")    \
    X(rl_fft_floor, "rl_fft_floor(shape, reps=3, measure=False) -> list of seconds for "        \
                    "r2c,c2r,r2c,c2r (benchmark hook)")                                         \
    X(deconv_wisdom, "deconv_wisdom(path, save=False): load or save FFTW wisdom (measured "     \
                     "plans)")                                                                   \
    X(morph_element, "morph_element(ndim, kind, radius, spacing, box, connectivity) -> "        \
                     "(bytearray, shape)")                                                       \
    X(stream_run, "stream_run(name, input, output, mem_limit=0, chunks=None, pyramid=0, "      \
                  "pyramid_mode=0, zarr_format=0, progress=None, **params) -> count or None: "  \
                  "a streamed run on paths (voxa.stream.run)")                                 \
    X(stream_plan, "stream_plan(name, input, mem_limit=0, chunks=None, **params) -> dict")     \
    X(label_first, "label_first(ids, n, origin, whole, first): first voxel of each block label") \
    X(label_face_pairs, "label_face_pairs(ids, axis, region_lo, own_lo, own_hi, structure) -> "  \
                        "bytes of int64 (a, b) pairs joined across a face")                      \
    X(label_resolve, "label_resolve(first, pairs, final) -> n: scipy numbering of block ids")   \
    X(dask_firsts, "dask_firsts(labels, n, origin, whole, first): voxa.dask chunk helper")    \
    X(dask_relabel, "dask_relabel(labels, table, out): out = table[labels] (voxa.dask)")       \
    X(edt_slices, "edt_slices(block, spacing, g) -> has_bg: EDT pass 1 by slices (voxa.dask)")  \
    X(edt_columns, "edt_columns(g, origin, has_bg, spacing, squared, out): EDT pass 2 along "    \
                   "axis 0 (voxa.dask)")                                                         \
    X(edt_cdt_slices, "edt_cdt_slices(block, metric, g): cdt pass 1 by slices (voxa.dask)")     \
    X(edt_cdt_columns, "edt_cdt_columns(g, metric, out): cdt pass 2 along axis 0 (voxa.dask)")  \
    X(measure, "measure(labels, intensity=None, spacing=None, moments=False, std=False) -> "   \
               "(n, label, "                                                                    \
               "num_pixels, area, centroid, bbox, mean, min, max, sum, centroid_weighted, "     \
               "moments2, std) as bytes")                                                            \
    X(perimeter_counts, "perimeter_counts(labels, rows, core_lo, core_hi) -> bytes of "        \
                        "len(rows) x 3 int64: the weight counts of skimage's perimeter (2-D)")   \
    X(euler_counts, "euler_counts(labels, rows, core_lo, core_hi) -> bytes of len(rows) "      \
                    "int64: the Euler characteristics of the core's cells (2-D, 3-D)")          \
    X(perimeter_of_counts, "perimeter_of_counts(counts) -> bytes of float64: the perimeters "  \
                           "of (n, 3) int64 weight counts")                                    \
    X(threshold_histogram, "threshold_histogram(image, lo, hi, nbins) -> bytes of int64 counts " \
                           "(Otsu's histogram over a given range)")                       \
    X(preview, "preview(image, labels, spacing=None, point=None, lo_pct=0, hi_pct=0, "         \
               "mem_limit=0) -> (rgb bytes, height, width)")                                    \
    X(png_write, "png_write(path, image): uint8 (h, w) or (h, w, 3) as PNG, atomically")      \
    X(run_device, "run_device(name, in_ptr, in_dtype, shape, out_ptr, out_dtype, connectivity=1, " \
                  "structure=None, spacing=None, squared=False) -> count: label/edt on CUDA " \
                  "device memory (voxa._device)")                                            \
    X(gpu_transfers, "gpu_transfers() -> (bytes to, bytes from) the GPU devices so far")      \
    X(pipeline_run, "pipeline_run(path=None, text=None, name=None, base_dir=None, mem_limit=0, " \
                    "force=False, dry_run=False, progress=None) -> dict: run a recipe")

#define VX_DECLARE(name, doc) PyObject *vx_py_##name(PyObject *, PyObject *, PyObject *);
VX_METHODS(VX_DECLARE)

static PyMethodDef methods[] = {
#define VX_ENTRY(name, doc) \
    {#name, (PyCFunction)(void (*)(void))vx_py_##name, METH_VARARGS | METH_KEYWORDS, doc},
    VX_METHODS(VX_ENTRY)
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_voxa", "voxa C extension (use the voxa package)", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__voxa(void) { return PyModule_Create(&module); }
