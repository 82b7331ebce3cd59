# Allocation-failure sweep (test builds only; `make test-asan` turns it on):
# every library source is compiled with src/core/failalloc_hook.h forced in,
# which routes voxa's own malloc/calloc/realloc/posix_memalign/aligned_alloc/
# strdup/strndup/fftwf_malloc through counting wrappers that
# tests/c/test_failalloc.c arms to fail one allocation at a time.
option(VOXA_FAILALLOC "Count the library's allocations and let tests fail them (test builds)" OFF)
if(VOXA_FAILALLOC)
  target_compile_definitions(voxa_obj PRIVATE VOXA_FAILALLOC)
  target_compile_options(voxa_obj PRIVATE "SHELL:-include ${PROJECT_SOURCE_DIR}/src/core/failalloc_hook.h")
  add_compile_definitions(VOXA_FAILALLOC) # the tests, created below, see it too
endif()
