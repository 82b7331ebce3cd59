/* voxa measure: per-object measurements of a label image, in one pass.
 *
 * For every label > 0 present (negative labels, like 0, are background, as
 * in scikit-image), the table gives the voxel count, centroid, bounding box
 * and, with an intensity image, mean / min / max / sum intensity and the
 * intensity-weighted centroid; with a spacing, physical volume and physical
 * centroids. Values and column names are those of
 * skimage.measure.regionprops_table (label, area, num_pixels, centroid-<d>,
 * bbox-<d>, intensity_mean, intensity_min, intensity_max,
 * centroid_weighted-<d>; intensity_sum is a voxa extension).
 *
 * Memory is O(labels present), never O(voxels). The accumulator takes the
 * volume in any number of regions, each with its origin in the whole volume
 * (voxa_measure_add), so a chunked run over a store gives the same table as
 * a run on the whole array (voxa_measure_store). */
#ifndef VOXA_MEASURE_H
#define VOXA_MEASURE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct voxa_store;

/** The result: one row per label present, labels ascending. Arrays are
 *  owned by the table (voxa_measure_table_free). Row-major per-axis arrays:
 *  centroid[r * ndim + d], bbox[r * 2 * ndim + k] (k < ndim: start of axis
 *  k; k >= ndim: stop, exclusive, of axis k - ndim, as skimage orders it). */
typedef struct voxa_measure_table {
    int ndim;
    int has_intensity;   /* the intensity columns are filled */
    int64_t n;           /* rows */
    int64_t *label;
    int64_t *num_pixels; /* voxel count */
    double *area;        /* num_pixels x product of the spacing */
    double *centroid;    /* mean voxel index x spacing (n x ndim) */
    int64_t *bbox;       /* n x 2*ndim, in voxel indices */
    /* with an intensity image (else NULL): */
    double *intensity_mean, *intensity_min, *intensity_max, *intensity_sum;
    double *centroid_weighted; /* n x ndim, physical as centroid */
    /* central second moments in voxel units (n x ndim x ndim, symmetric):
     * the sum over the object of (x_i - mean_i)(x_j - mean_j), from exact
     * integer sums (rounded once); times spacing_i x spacing_j they are
     * skimage's moments_central of order 2; NULL unless asked for
     * (VOXA_MEASURE_MOMENTS) */
    double *moments2;
    double spacing[VOXA_MAXDIM]; /* the spacing the table was made with (1: none) */
    double *perimeter;     /* VOXA_MEASURE_PERIMETER (else NULL): as voxa_measure_perimeter,
                              in voxels (the CSV multiplies by an isotropic spacing) */
    double *intensity_std; /* VOXA_MEASURE_STD, with intensity (else NULL): the population
                              standard deviation (np.std, ddof 0), from each run's squared
                              deviations merged as Chan et al. merge them (no
                              sum(x^2) - n mean^2 cancellation) */
    int64_t *euler_number; /* VOXA_MEASURE_EULER (else NULL): as voxa_measure_euler */
} voxa_measure_table;

/** The perimeter of each object of a 2-D label image, as
 *  skimage.measure.perimeter(labels == L, neighborhood=4) gives it (in
 *  voxels; regionprops' `perimeter` multiplies by the spacing): out[i] for
 *  the label rows[i] (n labels, ascending, e.g. a table's `label`). One
 *  pass; memory: 5 rows of labels (as int64), 3 rows of flags, 3 counts
 *  per label. */
VOXA_API voxa_status voxa_measure_perimeter(const voxa_array *labels, const int64_t *rows,
                                            int64_t n, double *out);
/** The integer counts behind voxa_measure_perimeter, for the border pixels
 *  of the core box [core_lo, core_hi) of `labels` only, added to counts
 *  (n x 3: pixels of weight 1, sqrt(2), (1 + sqrt(2)) / 2). The rest of the
 *  array is context (2 pixels around the core suffice); beyond the array
 *  is outside the image. Chunks of an image, each with 2 pixels of its
 *  neighbours, add up to the whole image's counts. */
VOXA_API voxa_status voxa_measure_perimeter_counts(const voxa_array *labels,
                                                   const int64_t *core_lo, const int64_t *core_hi,
                                                   const int64_t *rows, int64_t n,
                                                   int64_t *counts);
/** The perimeters (in voxels) of n labels from their counts (n x 3, as
 *  voxa_measure_perimeter_counts gives them): c0 + c1 sqrt(2) +
 *  c2 (1 + sqrt(2)) / 2, the one place these weights are applied. */
VOXA_API void voxa_measure_perimeter_of_counts(const int64_t *counts, int64_t n, double *out);

/** The Euler characteristic of each object of a 2-D or 3-D label image, as
 *  skimage.measure.euler_number(labels == L, connectivity=ndim) gives it
 *  (regionprops' `euler_number`): objects minus holes in 2-D (8- and
 *  4-connected), objects minus tunnels plus cavities in 3-D (26 / 6).
 *  out[i] for the label rows[i] (n labels, ascending). One pass, exact
 *  integers; memory: 4 rows of labels (as int64). */
VOXA_API voxa_status voxa_measure_euler(const voxa_array *labels, const int64_t *rows, int64_t n,
                                        int64_t *out);
/** The same for the lattice points of the core box [core_lo, core_hi) of
 *  `labels` only (and those of the array's far end on an axis the core
 *  reaches), added to chi (n values). The array around the core is context:
 *  one voxel on each side suffices; beyond the array is outside the image.
 *  Chunks of an image, each with a voxel of its neighbours on each side,
 *  add up to the whole image's values; an empty core adds nothing. */
VOXA_API voxa_status voxa_measure_euler_counts(const voxa_array *labels, const int64_t *core_lo,
                                               const int64_t *core_hi, const int64_t *rows,
                                               int64_t n, int64_t *chi);

/** Release the table's arrays (NULL allowed); resets *t. */
VOXA_API void voxa_measure_table_free(voxa_measure_table *t);

/** An accumulator: feed regions of the volume, then make the table. */
typedef struct voxa_measure_acc voxa_measure_acc;

/** What an accumulator keeps besides the geometry (flags, or-ed). */
enum {
    VOXA_MEASURE_INTENSITY = 1, /* the intensity columns (an intensity image is added) */
    VOXA_MEASURE_MOMENTS = 2,   /* the central second moments (moments2) */
    VOXA_MEASURE_STD = 4,       /* intensity_std (with an intensity image) */
    VOXA_MEASURE_PERIMETER = 8, /* perimeter (2-D; voxa_measure_store_with only) */
    VOXA_MEASURE_EULER = 16     /* euler_number (2-D, 3-D; voxa_measure_store_with only) */
};

/** Start an accumulator for an `ndim`-D volume of shape `shape` (origins
 *  and region shapes are checked against it), with the columns of `flags`
 *  (VOXA_MEASURE_*; 0 or 1 as before: without or with intensity). */
VOXA_API voxa_status voxa_measure_acc_new(int ndim, const int64_t *shape, int flags,
                                          voxa_measure_acc **acc);
/** Add one region: `labels` (integer dtype, not bool; any strides) whose
 *  first voxel lies at `origin` (NULL: zeros) in the whole volume, and
 *  `intensity` (any dtype, same shape; NULL exactly when the accumulator has
 *  no intensity). Regions must not overlap (each voxel counted once).
 *  Multithreaded; results never depend on the thread count. Labels above
 *  INT64_MAX (uint64) are EINVAL. */
VOXA_API voxa_status voxa_measure_add(voxa_measure_acc *acc, const voxa_array *labels,
                                      const voxa_array *intensity, const int64_t *origin);
/** Make the table from what was added. `spacing` (ndim values > 0, NULL:
 *  all 1) scales area and centroids. The accumulator stays usable. */
VOXA_API voxa_status voxa_measure_acc_table(const voxa_measure_acc *acc, const double *spacing,
                                            voxa_measure_table *t);
/** Free an accumulator (NULL allowed). */
VOXA_API void voxa_measure_acc_free(voxa_measure_acc *acc);

/** Measure a whole label image (with `intensity`, may be NULL, of the same
 *  shape) in one call. `spacing` as in voxa_measure_acc_table. */
VOXA_API voxa_status voxa_measure(const voxa_array *labels, const voxa_array *intensity,
                                  const double *spacing, voxa_measure_table *t);
/** voxa_measure with VOXA_MEASURE_MOMENTS in `flags` for moments2 and
 *  VOXA_MEASURE_STD for intensity_std (the intensity flag follows
 *  `intensity`). Without them those columns are NULL: the products cost
 *  1.15-1.45x the pass (most on many small objects), the deviations about
 *  4 % of a pass with intensity. */
VOXA_API voxa_status voxa_measure_with(const voxa_array *labels, const voxa_array *intensity,
                                       const double *spacing, int flags, voxa_measure_table *t);

/** Measure from stores (intensity may be NULL), reading blocks of whole
 *  rows, the largest whose label + intensity bytes fit `mem_limit` (0:
 *  64 MiB). Equal to voxa_measure on the whole arrays (for floating-point
 *  intensities, up to the order of summation). `progress` (may be NULL)
 *  is called after each block. */
VOXA_API voxa_status voxa_measure_store(struct voxa_store *labels, struct voxa_store *intensity,
                                        const double *spacing, int64_t mem_limit,
                                        voxa_progress progress, voxa_measure_table *t);
/** voxa_measure_store with `flags` (VOXA_MEASURE_MOMENTS, VOXA_MEASURE_STD and, for 2-D
 *  labels, VOXA_MEASURE_PERIMETER: a second pass over the labels by blocks of
 *  rows, each with 2 rows of its neighbours; for 2-D and 3-D labels
 *  VOXA_MEASURE_EULER: a pass by slabs along axis 0, each with one of its
 *  neighbours' on each side). */
VOXA_API voxa_status voxa_measure_store_with(struct voxa_store *labels,
                                             struct voxa_store *intensity, const double *spacing,
                                             int64_t mem_limit, int flags, voxa_progress progress,
                                             voxa_measure_table *t);
/** The flags a table needs for the CSV columns `properties` (as
 *  voxa_measure_write_csv takes them): VOXA_MEASURE_MOMENTS when a shape
 *  property is named, VOXA_MEASURE_STD for intensity_std,
 *  VOXA_MEASURE_PERIMETER for perimeter, VOXA_MEASURE_EULER for euler_number
 *  (unknown names are left to the writer). */
VOXA_API int voxa_measure_flags_for(const char *properties);
/** EINVAL, with the message voxa_measure_write_csv would give, unless
 *  `properties` (NULL: the default) can be written from an `ndim`-D table
 *  made with `flags` (ndim 0: any rank; all flags: the names only): lets a
 *  caller refuse a typo before a long pass. */
VOXA_API voxa_status voxa_measure_check_properties(const char *properties, int ndim, int flags);

/** Write the table as CSV with a header, atomically (temporary file renamed
 *  when complete). `properties`: comma-separated names among label, area,
 *  num_pixels, centroid, bbox, intensity_mean, intensity_min,
 *  intensity_max, intensity_sum, centroid_weighted, intensity_std and
 *  perimeter (2-D, isotropic spacing), euler_number (2-D, 3-D; each from a
 *  table with it) and, from a table with
 *  moments2, the shape properties inertia_tensor, inertia_tensor_eigvals,
 *  axis_major_length, axis_minor_length (2-D, 3-D), eccentricity and
 *  orientation (2-D), by skimage's formulas; in the column order wanted; NULL: "label,area,centroid,bbox" followed, with intensity, by
 *  "intensity_mean,intensity_min,intensity_max,intensity_sum,
 *  centroid_weighted". Per-axis properties give one column per axis
 *  (centroid-0, centroid-1, ...), as regionprops_table names them. Floats
 *  are written with 17 significant digits (they read back exactly). */
VOXA_API voxa_status voxa_measure_write_csv(const voxa_measure_table *t, const char *properties,
                                            const char *path);

#ifdef __cplusplus
}
#endif
#endif
