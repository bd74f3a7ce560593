# Chapters 00..PE_LAST_CHAPTER, in order. Each chapter's library depends only on the framework,
# base/ and the chapters before it; its program and tests also on the lab (README.md, "The
# house"; the check: tests/layering).
if(NOT PE_LAST_CHAPTER MATCHES "^[0-9]$")
  message(FATAL_ERROR "PE_LAST_CHAPTER must be a chapter number from 0 to 9, not '${PE_LAST_CHAPTER}'")
endif()

# pe_chapter_tests(chNN SOURCES...): one GoogleTest binary per chapter, labelled chNN so that
# `ctest -L chNN` runs exactly that chapter's tests, and each test marked in its source with
# the tasks it grades (pe_test_labels, cmake/TestLabels.cmake).
function(pe_chapter_tests chapter)
  if(NOT PE_BUILD_TESTS)
    return()
  endif()
  add_executable(${chapter}_tests ${ARGN})
  target_link_libraries(${chapter}_tests PRIVATE ${chapter} GTest::gtest_main)
  if(TARGET ch01_testing)  # the shared test helpers, from chapter 1 on
    target_link_libraries(${chapter}_tests PRIVATE ch01_testing)
  endif()
  gtest_discover_tests(${chapter}_tests PROPERTIES LABELS ${chapter} DISCOVERY_TIMEOUT 60)
  pe_test_labels(${chapter}_tests)
endfunction()

# pe_register_encodings(chNN function): chapter NN's library defines `void pe::function()`,
# which registers its encodings. A program linked with pe_link_lab calls the
# functions of the chapters it may know.
function(pe_register_encodings chapter function)
  set_property(GLOBAL APPEND PROPERTY PE_ENCODING_REGISTRARS "${chapter}:${function}")
endfunction()

# pe_link_lab(target last): links `target` to the lab (lab_run: tasks, trainer, runs,
# figures) and gives it its own register_chapter_encodings(),
# generated to call the registration functions of chapters 02..last only, and links those
# chapters. So chapter N's experiment holds chapters 0..N and none after them, and `pe`
# (last = PE_LAST_CHAPTER) holds every encoding in the build. The check: tests/layering.
function(pe_link_lab target last)
  get_property(registrars GLOBAL PROPERTY PE_ENCODING_REGISTRARS)
  set(PE_REGISTRAR_DECLARATIONS "")
  set(PE_REGISTRAR_CALLS "")
  set(chapters "")
  foreach(entry IN LISTS registrars)
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 chapter)
    list(GET parts 1 function)
    string(SUBSTRING "${chapter}" 2 2 number)
    math(EXPR number "${number}")
    if(number LESS_EQUAL last)
      list(APPEND chapters ${chapter})
      string(APPEND PE_REGISTRAR_DECLARATIONS "void ${function}();\n")
      string(APPEND PE_REGISTRAR_CALLS "  ${function}();\n")
    endif()
  endforeach()
  set(registry ${PROJECT_BINARY_DIR}/chapter_registry/${target}.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/lab/chapter_registry.cpp.in ${registry} @ONLY)
  target_sources(${target} PRIVATE ${registry})
  target_link_libraries(${target} PRIVATE lab_run ${chapters})
endfunction()

file(GLOB pe_chapter_dirs RELATIVE ${PROJECT_SOURCE_DIR}/chapters ${PROJECT_SOURCE_DIR}/chapters/[0-9][0-9]-*)
list(SORT pe_chapter_dirs)
foreach(dir IN LISTS pe_chapter_dirs)
  string(SUBSTRING "${dir}" 0 2 number)
  math(EXPR number "${number}")
  if(number LESS_EQUAL PE_LAST_CHAPTER AND EXISTS ${PROJECT_SOURCE_DIR}/chapters/${dir}/CMakeLists.txt)
    add_subdirectory(chapters/${dir})
    # Every chapter's program reads its command line through base/: --help works, and an
    # unknown option stops it (exit status 2) before it does anything.
    string(SUBSTRING "${dir}" 0 2 two_digits)
    set(program ch${two_digits}_experiment)
    if(PE_BUILD_TESTS AND TARGET ${program})
      add_test(NAME ${program}.Help COMMAND ${program} --help)
      add_test(NAME ${program}.UnknownOptionIsAnError COMMAND ${program} --no-such-option)
      set_tests_properties(${program}.Help PROPERTIES
                           PASS_REGULAR_EXPRESSION "Usage: ${program}" LABELS ch${two_digits})
      set_tests_properties(${program}.UnknownOptionIsAnError PROPERTIES
                           WILL_FAIL TRUE LABELS ch${two_digits})
    endif()
  endif()
endforeach()

