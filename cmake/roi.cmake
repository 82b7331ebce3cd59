# roi family: the CLI reads coordinate tables through voxa_csv_read when the
# library has it (src/io/csv.c is another family's; until it is merged the CLI
# reads .npy coordinates only and says so). Re-evaluated at every configure,
# which the source globs' CONFIGURE_DEPENDS trigger when files appear.
file(GLOB VOXA_ROI_IO_SOURCES ${PROJECT_SOURCE_DIR}/src/io/*.c)
set(VOXA_ROI_HAVE_CSV OFF)
foreach(f ${VOXA_ROI_IO_SOURCES})
  file(STRINGS ${f} hit REGEX "^[A-Za-z_ \t]*voxa_status[ \t]+voxa_csv_read[ \t]*\\(")
  if(hit)
    set(VOXA_ROI_HAVE_CSV ON)
  endif()
endforeach()
if(VOXA_ROI_HAVE_CSV)
  add_compile_definitions(VOXA_HAVE_CSV=1)
endif()
