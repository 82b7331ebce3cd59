# Fuzzing builds (make fuzz): instrument the library itself for libFuzzer's
# coverage feedback, not only the fuzz_*.c targets (which add
# -fsanitize=fuzzer themselves in CMakeLists.txt).
if(VOXA_FUZZ)
  target_compile_options(voxa_obj PRIVATE -fsanitize=fuzzer-no-link)
endif()
