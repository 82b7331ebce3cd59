# GPU backends (src/backend, docs/gpu.md). Nothing here is required: the
# OpenCL and CUDA runtimes are loaded at run time with dlopen, so the only
# build-time needs are the OpenCL headers (types only; without them the
# opencl backend reports "not built") and nvcc (without it the cuda backend
# reports "not built"; the build never fails for a missing nvcc).
set(VOXA_GEN ${PROJECT_BINARY_DIR}/generated)
set(VOXA_PORTABLE ${PROJECT_SOURCE_DIR}/src/backend/vx_portable.h)
file(GLOB VOXA_BACKEND_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backend/*.c)
file(GLOB VOXA_CL_KERNELS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/core/*.cl
     ${PROJECT_SOURCE_DIR}/src/ops/*/*.cl)
list(SORT VOXA_CL_KERNELS)

find_path(VOXA_OPENCL_INCLUDE CL/cl.h)
if(VOXA_OPENCL_INCLUDE)
  target_compile_definitions(voxa_obj PRIVATE VOXA_HAVE_OPENCL_HEADERS)
  target_include_directories(voxa_obj PRIVATE ${VOXA_OPENCL_INCLUDE})
else()
  message(STATUS "voxa: CL/cl.h not found: the opencl backend is not built")
endif()

# CUDA: the same .cl files, included by a generated .cu, compiled by nvcc
# into a fatbin (sm_75 and sm_90 code + compute_75 PTX for newer GPUs).
option(VOXA_CUDA "Compile the CUDA kernels when nvcc is found" ON)
find_program(VOXA_NVCC nvcc HINTS /usr/local/cuda/bin)
set(VOXA_FATBIN "")
if(VOXA_CUDA AND VOXA_NVCC)
  set(cu "#include \"vx_portable.h\"\n")
  foreach(f ${VOXA_CL_KERNELS})
    string(APPEND cu "#include \"${f}\"\n")
  endforeach()
  file(CONFIGURE OUTPUT ${VOXA_GEN}/voxa_kernels.cu CONTENT "${cu}")
  set(VOXA_FATBIN ${VOXA_GEN}/voxa_kernels.fatbin)
  add_custom_command(OUTPUT ${VOXA_FATBIN}
    COMMAND ${VOXA_NVCC} -fatbin -O3 --fmad=false -I${PROJECT_SOURCE_DIR}/src/backend
            -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90
            -gencode arch=compute_75,code=compute_75
            -o ${VOXA_FATBIN} ${VOXA_GEN}/voxa_kernels.cu
    DEPENDS ${VOXA_GEN}/voxa_kernels.cu ${VOXA_PORTABLE} ${VOXA_CL_KERNELS}
    COMMENT "nvcc: CUDA kernels (sm_75, sm_90, compute_75 PTX)" VERBATIM)
else()
  message(STATUS "voxa: nvcc not found (or VOXA_CUDA=OFF): the cuda backend is not built")
endif()

string(REPLACE ";" "|" voxa_embed_sources "${VOXA_PORTABLE};${VOXA_CL_KERNELS}")
add_custom_command(OUTPUT ${VOXA_GEN}/voxa_kernels.c
  COMMAND ${CMAKE_COMMAND} -DOUT=${VOXA_GEN}/voxa_kernels.c -DSOURCES=${voxa_embed_sources}
          -DFATBIN=${VOXA_FATBIN} -P ${PROJECT_SOURCE_DIR}/src/backend/embed.cmake
  DEPENDS ${VOXA_PORTABLE} ${VOXA_CL_KERNELS} ${VOXA_FATBIN}
          ${PROJECT_SOURCE_DIR}/src/backend/embed.cmake
  COMMENT "embedding the GPU kernels" VERBATIM)
target_sources(voxa_obj PRIVATE ${VOXA_BACKEND_SOURCES} ${VOXA_GEN}/voxa_kernels.c)
target_link_libraries(voxa_obj PUBLIC ${CMAKE_DL_LIBS})
