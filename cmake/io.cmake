# io family: libdeflate (a dependency of Debian's libtiff-dev, and what its
# libtiff uses for deflate), to compress and decompress TIFF deflate strips
# in parallel (src/io/tiff_write.c, src/io/tiff_inflate.c).
pkg_check_modules(DEFLATE REQUIRED IMPORTED_TARGET libdeflate)
target_link_libraries(voxa_obj PUBLIC PkgConfig::DEFLATE)
