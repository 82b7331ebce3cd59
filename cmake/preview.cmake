# preview family: libpng (Debian's libpng-dev) writes the PNG previews
# (src/ops/preview/png.c).
pkg_check_modules(PNG REQUIRED IMPORTED_TARGET libpng)
target_link_libraries(voxa_obj PUBLIC PkgConfig::PNG)
