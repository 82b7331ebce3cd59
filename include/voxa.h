/* voxa: fast, exact, lean processing of big 2D/3D microscopy images.
 * The one public header: include it, link -lvoxa (pkg-config voxa). */
#ifndef VOXA_H
#define VOXA_H

#include "voxa/core.h"
#include "voxa/io.h"
#include "voxa/zarr.h" /* Zarr v2/v3 arrays, OME-Zarr */
#include "voxa/op.h" /* op descriptors and the registry */
#include "voxa/stream.h" /* any op block by block, out of core */
#include "voxa/pipeline.h" /* recipes: whole jobs, resumable, with a report */
/* op families, one header each */
#include "voxa/balls.h"
#include "voxa/deconv.h"
#include "voxa/label.h"
#include "voxa/roi.h"
/* families below */
#include "voxa/edt.h"
#include "voxa/morph.h"
#include "voxa/measure.h"
#include "voxa/preview.h"
#include "voxa/threshold.h"
/* where ops run: cpu, opencl, cuda */
#include "voxa/backend.h"
#include "voxa/device.h" /* ops on arrays in GPU memory (CuPy) */

#endif
