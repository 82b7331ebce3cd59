# FFTW 3 in single precision (and double, for VOXA_RL_DOUBLE plans) with
# their OpenMP threads, for deconvolution. The thread libraries have no .pc
# file: find them beside libfftw3f and link them BEFORE libfftw3f / libfftw3
# (static link order).
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
pkg_check_modules(FFTW3 REQUIRED IMPORTED_TARGET fftw3)
find_library(FFTW3F_OMP_LIB NAMES fftw3f_omp HINTS ${FFTW3F_LIBRARY_DIRS} REQUIRED)
find_library(FFTW3_OMP_LIB NAMES fftw3_omp HINTS ${FFTW3_LIBRARY_DIRS} REQUIRED)
target_link_libraries(voxa_obj PUBLIC ${FFTW3F_OMP_LIB} PkgConfig::FFTW3F
                      ${FFTW3_OMP_LIB} PkgConfig::FFTW3)
