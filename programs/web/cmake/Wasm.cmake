# The WebAssembly build (the wasm preset; the top CMakeLists.txt includes this before
# cmake/Dependencies.cmake, which then finds these dependencies as it finds a system's
# packages): its dependencies, and how its programs run.
#
# xtl, xsimd and xtensor: the set Ubuntu 24.04 ships, installed into this build folder from
# their release archives (PE_DEPS_ARCHIVES, or downloaded). Not the native build's pinned
# set: emscripten 3.1.6 compiles with clang 14, which rejects xtensor 0.27's out-of-line
# member definitions with a requires-clause; xtensor 0.25 predates them. xsimd 12.1 has the
# WebAssembly SIMD128 architecture (since 11.2), so the kernels run four floats at a time.
#
# nlohmann_json and CLI11: the system's headers, each folder alone (header_only_package.cmake).
set(pe_wasm_releases
    "xtl 0.7.7 17e94193caa5e159a45af38d5727b84eda662a9325d0e0d999b3bbea465573a8"
    "xsimd 12.1.1 c7d055ff03ff1b9e91135020667af0b242556b02dd28f26f42ac2f8abbbf9124"
    "xtensor 0.25.0 4cc64231f77c5a8d7efe70326c91f9591d4c5d3b8dbf8a4f47a4243bee299845")
set(pe_wasm_prefix ${CMAKE_BINARY_DIR}/wasm_dependencies)

# pe_wasm_install_release(name version sha256): the release archive, checked, unpacked and
# installed (header-only: nothing compiles) into pe_wasm_prefix, once per build folder.
function(pe_wasm_install_release name version sha256)
  set(stamp ${pe_wasm_prefix}/${name}-${version}.installed)
  if(EXISTS ${stamp})
    return()
  endif()
  set(archive ${pe_wasm_prefix}/archives/${name}-${version}.tar.gz)
  file(MAKE_DIRECTORY ${pe_wasm_prefix}/archives)
  if(PE_DEPS_ARCHIVES)
    file(COPY_FILE ${PE_DEPS_ARCHIVES}/${name}-${version}.tar.gz ${archive})
  else()
    file(DOWNLOAD https://github.com/xtensor-stack/${name}/archive/refs/tags/${version}.tar.gz
         ${archive} STATUS status)
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      message(FATAL_ERROR "wasm: could not download ${name} ${version} (${status}); give the "
                          "folder that holds ${name}-${version}.tar.gz as -DPE_DEPS_ARCHIVES=DIR")
    endif()
  endif()
  file(SHA256 ${archive} actual)
  if(NOT actual STREQUAL sha256)
    message(FATAL_ERROR "wasm: ${archive} has SHA-256 ${actual}, expected ${sha256}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${archive} DESTINATION ${pe_wasm_prefix}/sources)
  set(source ${pe_wasm_prefix}/sources/${name}-${version})
  # A plain host configure: these projects only copy their headers and CMake files.
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${source} -B ${source}-build
                          -DCMAKE_INSTALL_PREFIX=${pe_wasm_prefix}
                          -DCMAKE_PREFIX_PATH=${pe_wasm_prefix}
                  COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${source}-build
                  COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
  file(TOUCH ${stamp})
endfunction()

if(PE_FETCH)
  message(FATAL_ERROR "wasm: PE_FETCH does not apply to the WebAssembly build, which brings "
                      "its own xtl, xsimd and xtensor (programs/web/cmake/Wasm.cmake)")
endif()
foreach(release IN LISTS pe_wasm_releases)
  separate_arguments(release)
  pe_wasm_install_release(${release})
endforeach()

# Emscripten's toolchain looks for packages inside its own sysroot only: each one is named
# by its folder instead.
set(xtl_DIR ${pe_wasm_prefix}/share/cmake/xtl CACHE PATH "" FORCE)
set(xsimd_DIR ${pe_wasm_prefix}/lib/cmake/xsimd CACHE PATH "" FORCE)
set(xtensor_DIR ${pe_wasm_prefix}/share/cmake/xtensor CACHE PATH "" FORCE)
set(nlohmann_json_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE PATH "" FORCE)
set(CLI11_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE PATH "" FORCE)

# With -DPE_BUILD_TESTS=ON (programs/web/ci does so): the kernel tests, which compare the SIMD128
# kernels with their scalar twins under node. GoogleTest is built from the system's sources
# (Debian's googletest package), without threads; stb_image.h (which the configure step
# asks for) from the system's stb folder.
if(PE_BUILD_TESTS)
  if(NOT FETCHCONTENT_SOURCE_DIR_GOOGLETEST AND EXISTS /usr/src/googletest/CMakeLists.txt)
    set(FETCHCONTENT_SOURCE_DIR_GOOGLETEST /usr/src/googletest CACHE PATH "" FORCE)
  endif()
  set(gtest_disable_pthreads ON CACHE BOOL "" FORCE)
  include(${CMAKE_CURRENT_LIST_DIR}/header_only_package.cmake)
  pe_system_header_folder(include_dir stb stb_image.h)
  set(PE_STB_INCLUDE_DIR ${include_dir}/stb CACHE PATH "" FORCE)
endif()

# Every program: memory that grows as a model needs it; under node (the kernel tests), the
# environment variables reach getenv() as they do natively, so that PE_SIMD=scalar works.
add_link_options(-sALLOW_MEMORY_GROWTH=1
                 "SHELL:--pre-js ${CMAKE_CURRENT_LIST_DIR}/node_environment.js")
