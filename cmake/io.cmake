# io family: zlib, for compressing TIFF deflate strips in parallel
# (src/io/tiff_write.c); libtiff itself links it too.
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
target_link_libraries(voxa_obj PUBLIC PkgConfig::ZLIB)
