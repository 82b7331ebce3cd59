# FFTW 3 in single precision with its OpenMP threads, for deconvolution.
# The thread library has no .pc file: find it beside libfftw3f and link it
# BEFORE libfftw3f (static link order).
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
find_library(FFTW3F_OMP_LIB NAMES fftw3f_omp HINTS ${FFTW3F_LIBRARY_DIRS} REQUIRED)
target_link_libraries(voxa_obj PUBLIC ${FFTW3F_OMP_LIB} PkgConfig::FFTW3F)
