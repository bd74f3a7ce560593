# Every dependency is a Debian package; scripts/install-deps.sh installs the missing ones.
# A missing one stops the configure step with the name of the package to install.
function(pe_require_package cmake_name debian_package)
  find_package(${cmake_name} ${ARGN} QUIET)
  if(NOT ${cmake_name}_FOUND)
    message(FATAL_ERROR
      "${cmake_name} was not found. Install the Debian package '${debian_package}' "
      "(or run scripts/install-deps.sh, which installs everything that is missing).")
  endif()
endfunction()

pe_require_package(xtl xtl-dev)
pe_require_package(xsimd libxsimd-dev)
pe_require_package(xtensor libxtensor-dev)
pe_require_package(OpenMP "g++ (libgomp)")
# Every program's command line, chapter 0's included (tools/cli).
pe_require_package(CLI11 libcli11-dev)
if(PE_BUILD_TESTS)
  pe_require_package(GTest "libgtest-dev")
  # The figure tests decode the PNG files they draw (stb_image, built into Debian's libstb).
  find_path(STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb)
  find_library(STB_LIBRARY stb)
  if(NOT STB_INCLUDE_DIR OR NOT STB_LIBRARY)
    message(FATAL_ERROR "stb_image was not found. Install the Debian package 'libstb-dev' "
                        "(or run scripts/install-deps.sh, which installs everything that is missing).")
  endif()
endif()
if(PE_BUILD_BENCH)
  pe_require_package(benchmark libbenchmark-dev)
  find_package(BLAS QUIET)
  if(NOT BLAS_FOUND)
    message(FATAL_ERROR "No BLAS for the benchmark reference. Install the Debian package "
                        "'libopenblas-dev', or configure with -DPE_BUILD_BENCH=OFF.")
  endif()
endif()
