/* TIFF via libtiff: temporary placeholder until the reader/writer lands. */
#include "internal.h"

voxa_status voxa_tiff_read(const char *path, voxa_array *out) {
    return voxa__error(VOXA_EUNSUPPORTED, "TIFF reading is not built yet: '%s'", path);
}

voxa_status voxa_tiff_write(const char *path, const voxa_array *a) {
    return voxa__error(VOXA_EUNSUPPORTED, "TIFF writing is not built yet: '%s'", path);
}
