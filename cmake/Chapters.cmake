# Chapters 00..PE_LAST_CHAPTER, in order; each one depends only on the framework and the
# chapters before it.
if(NOT PE_LAST_CHAPTER MATCHES "^[0-8]$")
  message(FATAL_ERROR "PE_LAST_CHAPTER must be a chapter number from 0 to 8, not '${PE_LAST_CHAPTER}'")
endif()

# pe_chapter_tests(chNN SOURCES...): one GoogleTest binary per chapter, labelled chNN so that
# `ctest -L chNN` runs exactly that chapter's tests.
function(pe_chapter_tests chapter)
  if(NOT PE_BUILD_TESTS)
    return()
  endif()
  add_executable(${chapter}_tests ${ARGN})
  target_link_libraries(${chapter}_tests PRIVATE ${chapter} GTest::gtest_main)
  if(TARGET pe_testing)  # the shared test helpers, from chapter 1 on
    target_link_libraries(${chapter}_tests PRIVATE pe_testing)
  endif()
  gtest_discover_tests(${chapter}_tests PROPERTIES LABELS ${chapter} DISCOVERY_TIMEOUT 60)
endfunction()

# pe_register_encodings(chNN function): chapter NN's library defines `void pe::function()`,
# which registers its encodings. The `pe` program calls every such function of the chapters
# in the build (see experiments/CMakeLists.txt), so `pe list` shows exactly those.
function(pe_register_encodings chapter function)
  set_property(GLOBAL APPEND PROPERTY PE_ENCODING_CHAPTERS ${chapter})
  set_property(GLOBAL APPEND PROPERTY PE_ENCODING_REGISTRARS ${function})
endfunction()

file(GLOB pe_chapter_dirs RELATIVE ${PROJECT_SOURCE_DIR}/chapters ${PROJECT_SOURCE_DIR}/chapters/[0-9][0-9]-*)
list(SORT pe_chapter_dirs)
foreach(dir IN LISTS pe_chapter_dirs)
  string(SUBSTRING "${dir}" 0 2 number)
  math(EXPR number "${number}")
  if(number LESS_EQUAL PE_LAST_CHAPTER AND EXISTS ${PROJECT_SOURCE_DIR}/chapters/${dir}/CMakeLists.txt)
    add_subdirectory(chapters/${dir})
  endif()
endforeach()

