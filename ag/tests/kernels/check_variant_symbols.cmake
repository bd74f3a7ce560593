# Usage: cmake -DVARIANT=avx512 -DNM=nm -DOBJDUMP=objdump -DOBJECTS="a.o;b.o" -P this-file
# Fails if an object file of the kernel variant VARIANT defines an external (global or weak)
# symbol whose demangled name does not contain VARIANT (its namespace ag::kernels::VARIANT,
# or an xsimd arch of that instruction set), or has a static-initialiser section. Either
# would let code compiled for VARIANT run on a CPU that lacks it (see dispatch.cpp).
cmake_minimum_required(VERSION 3.25)
set(failures "")
foreach(object ${OBJECTS})
  execute_process(COMMAND ${NM} --defined-only --extern-only --demangle ${object}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line ${lines})
    # Blank lines, file headers, and the pointer to the C++ personality routine (data that
    # every object with exception tables shares, not code).
    if(line STREQUAL "" OR line MATCHES ":$" OR line MATCHES " DW\\.ref\\.__gxx_personality_v0$")
      continue()
    endif()
    string(FIND "${line}" "${VARIANT}" at)
    if(at EQUAL -1)
      string(APPEND failures "  ${object}: ${line}\n")
    endif()
  endforeach()
  execute_process(COMMAND ${OBJDUMP} -h ${object} OUTPUT_VARIABLE sections)
  if(sections MATCHES "\\.init_array|\\.ctors")
    string(APPEND failures "  ${object}: has a static initialiser (.init_array)\n")
  endif()
endforeach()
list(LENGTH OBJECTS count)
if(count EQUAL 0)
  message(FATAL_ERROR "no object files given")
endif()
if(failures)
  message(FATAL_ERROR "kernel variant ${VARIANT} exports names the rest of the program may "
                      "share (or runs code at start-up):\n${failures}")
endif()
message(STATUS "${count} object files of variant ${VARIANT}: every external name is its own")
