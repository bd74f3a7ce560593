# The chapters are the folders chapters/NN-*/ that hold a CMakeLists.txt, found here, so that
# adding a chapter is adding its folder: no list of chapters, no last number to edit. This
# build holds chapters 00..PE_LAST_CHAPTER, in order: every chapter found when PE_LAST_CHAPTER
# is empty (the default, and what the presets set), else the chapters up to that one, which
# must be a chapter found ("7" and "07" both name chapters/07-*). Each chapter's library
# depends only on the framework, base/ and the chapters before it; its program and tests also
# on the lab (README.md, "The house"; the check: tests/layering). CONFIGURE_DEPENDS: a folder
# added or removed configures the build again at the next build.
file(GLOB pe_chapter_dirs RELATIVE ${PROJECT_SOURCE_DIR}/chapters CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/chapters/[0-9][0-9]-*)
list(SORT pe_chapter_dirs)
set(PE_CHAPTER_NUMBERS "")  # every chapter found, as numbers (tests/ configures each one alone)
set(pe_chapter_names "")    # the same, as folder names, for the messages
foreach(dir IN LISTS pe_chapter_dirs)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/chapters/${dir}/CMakeLists.txt)
    list(REMOVE_ITEM pe_chapter_dirs ${dir})
    continue()
  endif()
  string(SUBSTRING "${dir}" 0 2 number)
  math(EXPR number "${number}")
  list(FIND PE_CHAPTER_NUMBERS ${number} same)
  if(same GREATER_EQUAL 0)
    list(GET pe_chapter_names ${same} other)
    message(FATAL_ERROR "two chapter folders have the number ${number}: chapters/${other} and "
                        "chapters/${dir} (each chapter needs a number of its own)")
  endif()
  list(APPEND PE_CHAPTER_NUMBERS ${number})
  list(APPEND pe_chapter_names ${dir})
endforeach()
string(REPLACE ";" ", " pe_chapter_names "${pe_chapter_names}")
if(PE_CHAPTER_NUMBERS STREQUAL "")
  message(FATAL_ERROR "no chapter folder (chapters/NN-name/ with a CMakeLists.txt) under "
                      "${PROJECT_SOURCE_DIR}/chapters")
endif()
if("${PE_LAST_CHAPTER}" STREQUAL "")
  list(GET PE_CHAPTER_NUMBERS -1 PE_LAST_BUILT_CHAPTER)
elseif(PE_LAST_CHAPTER MATCHES "^[0-9]+$")
  math(EXPR PE_LAST_BUILT_CHAPTER "${PE_LAST_CHAPTER}")  # "07" is 7
  if(NOT PE_LAST_BUILT_CHAPTER IN_LIST PE_CHAPTER_NUMBERS)
    message(FATAL_ERROR "PE_LAST_CHAPTER=${PE_LAST_CHAPTER} names no chapter: the chapters are "
                        "${pe_chapter_names} (give one of their numbers, or leave "
                        "PE_LAST_CHAPTER empty for all of them)")
  endif()
else()
  message(FATAL_ERROR "PE_LAST_CHAPTER must be a chapter's number or empty (every chapter), not "
                      "'${PE_LAST_CHAPTER}': the chapters are ${pe_chapter_names}")
endif()
# For the scripts that read a build's cache (programs/coursework/check_tasks, tests/layering).
set(PE_LAST_BUILT_CHAPTER ${PE_LAST_BUILT_CHAPTER} CACHE INTERNAL
    "the last chapter in this build: PE_LAST_CHAPTER, or the last chapter found when it is empty")
message(STATUS "chapters: ${pe_chapter_names}; this build holds 0..${PE_LAST_BUILT_CHAPTER}")

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
# (last = PE_LAST_BUILT_CHAPTER) holds every encoding in the build. The check: tests/layering.
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

foreach(dir IN LISTS pe_chapter_dirs)
  string(SUBSTRING "${dir}" 0 2 number)
  math(EXPR number "${number}")
  if(number LESS_EQUAL PE_LAST_BUILT_CHAPTER)
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

