# The layering rule of the book, checked on CMake's own dependency graph: chapter NN's
# library, experiment and tests (chNN, chNN_experiment, chNN_tests) depend, directly or
# through any other target, on no chapter after NN.
#
#   cmake -DSOURCE=<repo> -DBINARY=<scratch dir> -DLAST=<N> [-DGENERATOR=...] [-DCXX=...]
#         [-DSETTINGS=<initial cache file>]
#         -P CheckLayering.cmake   configures chapters 0..N (PE_LAST_CHAPTER=N) with
#                                  --graphviz, then checks the graph
#   cmake -DDOT=<file.dot> -P CheckLayering.cmake   checks a graph that is already written
#
# Configure only: a chapter that names a later chapter's target shows up in the graph (as an
# unknown library when that chapter is not configured), so no compiling is needed.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED DOT)
  foreach(required SOURCE BINARY LAST)
    if(NOT DEFINED ${required})
      message(FATAL_ERROR "CheckLayering: -D${required}=... is missing")
    endif()
  endforeach()
  file(MAKE_DIRECTORY ${BINARY})
  # One graph file, no per-target files.
  file(WRITE ${BINARY}/CMakeGraphVizOptions.cmake
       "set(GRAPHVIZ_GENERATE_PER_TARGET FALSE)\nset(GRAPHVIZ_GENERATE_DEPENDERS FALSE)\n")
  set(DOT ${BINARY}/targets.dot)
  set(arguments -S ${SOURCE} -B ${BINARY} -DPE_LAST_CHAPTER=${LAST} --graphviz=${DOT})
  if(GENERATOR)
    list(APPEND arguments -G ${GENERATOR})
  endif()
  if(CXX)
    list(APPEND arguments -DCMAKE_CXX_COMPILER=${CXX})
  endif()
  if(SETTINGS)
    list(APPEND arguments -C ${SETTINGS})  # the settings of the build that runs the check
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} ${arguments} RESULT_VARIABLE status
                  OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "CheckLayering: configuring with PE_LAST_CHAPTER=${LAST} failed:\n${output}")
  endif()
endif()

# The edges, from the comments CMake writes after them: `"node3" -> "node1"  // ch02 -> ch01`.
file(STRINGS ${DOT} lines REGEX "// .+ -> .+$")
set(targets "")
foreach(line IN LISTS lines)
  string(REGEX MATCH "// (.+) -> (.+)$" ignored "${line}")
  set(from "${CMAKE_MATCH_1}")
  set(to "${CMAKE_MATCH_2}")
  string(MAKE_C_IDENTIFIER "${from}" key)
  if(NOT from STREQUAL to)
    list(APPEND edges_${key} "${to}")
  endif()
  list(APPEND targets "${from}")
endforeach()
list(REMOVE_DUPLICATES targets)

set(violations "")
set(checked 0)
foreach(root IN LISTS targets)
  if(NOT root MATCHES "^ch([0-9][0-9])(_experiment|_tests)?$")
    continue()
  endif()
  math(EXPR chapter "${CMAKE_MATCH_1}")
  math(EXPR checked "${checked} + 1")
  # Breadth-first over everything root depends on, remembering how each target was reached.
  set(queue "${root}")
  set(seen "${root}")
  string(MAKE_C_IDENTIFIER "${root}" key)
  set(path_${key} "${root}")
  while(queue)
    list(POP_FRONT queue current)
    string(MAKE_C_IDENTIFIER "${current}" current_key)
    foreach(next IN LISTS edges_${current_key})
      if(next IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${next}")
      list(APPEND queue "${next}")
      string(MAKE_C_IDENTIFIER "${next}" next_key)
      set(path_${next_key} "${path_${current_key}} -> ${next}")
      if(next MATCHES "^ch([0-9][0-9])(_.*)?$")
        math(EXPR other "${CMAKE_MATCH_1}")
        if(other GREATER chapter)
          list(APPEND violations "${path_${next_key}}")
        endif()
      endif()
    endforeach()
  endwhile()
  foreach(target IN LISTS seen)  # paths are per root
    string(MAKE_C_IDENTIFIER "${target}" key)
    unset(path_${key})
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "CheckLayering: no chapter targets in ${DOT}")
endif()
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "CheckLayering: a chapter depends on a later chapter:\n  ${text}")
endif()
message(STATUS "CheckLayering: ${checked} chapter targets in ${DOT}, none depends on a later chapter")
