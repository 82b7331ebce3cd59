# Zarr (src/io/zarr*.c): codec libraries and a JSON parser, all Debian
# packages (tools/setup-deps.sh): c-blosc 1.x, zstd, zlib, cJSON.
pkg_check_modules(ZARRDEPS REQUIRED IMPORTED_TARGET blosc libzstd zlib libcjson)
target_link_libraries(voxa_obj PUBLIC PkgConfig::ZARRDEPS)
