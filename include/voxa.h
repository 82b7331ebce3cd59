/* voxa: fast, exact, lean processing of big 2D/3D microscopy images.
 * The one public header: include it, link -lvoxa (pkg-config voxa). */
#ifndef VOXA_H
#define VOXA_H

#include "voxa/core.h"
#include "voxa/io.h"
#include "voxa/roi.h"
/* families below */

#endif
