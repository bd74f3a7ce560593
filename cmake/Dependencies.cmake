# Dependencies: the system's packages first; where one is missing, a pinned release through
# FetchContent, so that a reader on any system still has the README's two commands.
# scripts/install-deps.sh installs the packages with the system's package manager.
#
#   -DPE_FETCH="xtl;xsimd;xtensor"   take these from their pinned releases even when the
#                                    system has them (or ALL); CI builds this way to check the
#                                    newest releases on a machine that has older ones
#   -DPE_DEPS_ARCHIVES=DIR           read the pinned release archives from DIR instead of
#                                    downloading them (offline machines; CI uses ../shared/deps)
#   -DPE_OPENMP=AUTO|ON|OFF          threads through OpenMP: when found (AUTO), required, or not
include(FetchContent)

# [pinned]
# The releases fetched when the system has none. xtl, xsimd and xtensor come as a set: a
# system's three packages, or these three (xtensor 0.27 needs xsimd >= 13.2 and xtl 0.8).
set(PE_XTL_VERSION 0.8.2)
set(PE_XTL_SHA256 44d5c16ea5fd0cf75794ca11dfb25ca159d5e546930a9fa31bd8252bc80bcd75)
set(PE_XSIMD_VERSION 14.3.0)
set(PE_XSIMD_SHA256 fb26a407fc86edb88572479140c8c320798b7840fe5d1d817681d73fbe56c07b)
set(PE_XTENSOR_VERSION 0.27.1)
set(PE_XTENSOR_SHA256 2c150d6a59e4c17ff8a6eb4f20a6ea264b195b2425bfd76072abb091669b3dce)
# Git commits (content-addressed, so the commit is the checksum).
set(PE_STB_COMMIT 013ac3beddff3dbffafd5177e7972067cd2b5083)        # stb_image.h, 2024-05-31
set(PE_GOOGLETEST_COMMIT 52eb8108c5bdec04579160ae17225d66034bd723) # googletest v1.17.0
# The oldest releases the sources are written for (DESIGN.md: xsimd 8.1 to 14.x, xtensor 0.24
# to 0.27, xtl 0.7 to 0.8; ag/kernels/xsimd_compat.hpp absorbs their differences).
set(PE_XSIMD_OLDEST 8.1)
set(PE_XTENSOR_OLDEST 0.24)
# [pinned]

set(PE_FETCH "" CACHE STRING
    "Dependencies taken from their pinned release even when the system has them: a list of xtl, xsimd, xtensor, stb, googletest, or ALL")
set(PE_DEPS_ARCHIVES "" CACHE PATH
    "A folder with the pinned release archives (xsimd-14.3.0.tar.gz, ...), used instead of downloading")
set(PE_OPENMP AUTO CACHE STRING "Threads through OpenMP: AUTO (when the compiler has it), ON, OFF")
set_property(CACHE PE_OPENMP PROPERTY STRINGS AUTO ON OFF)

# The install line for each system, for the messages below.
function(pe_missing_message out what debian fedora brew)
  set(${out}
      "${what} was not found. Install it (Debian/Ubuntu: ${debian}; Fedora: ${fedora}; macOS: brew install ${brew}), or run scripts/install-deps.sh, which installs everything that is missing."
      PARENT_SCOPE)
endfunction()

function(pe_fetched name out)
  if("ALL" IN_LIST PE_FETCH OR "${name}" IN_LIST PE_FETCH)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

foreach(name IN LISTS PE_FETCH)
  if(NOT name MATCHES "^(ALL|xtl|xsimd|xtensor|stb|googletest)$")
    message(FATAL_ERROR "PE_FETCH: unknown dependency '${name}' (expected xtl, xsimd, xtensor, stb, googletest or ALL)")
  endif()
endforeach()
if(PE_DEPS_ARCHIVES AND NOT IS_DIRECTORY "${PE_DEPS_ARCHIVES}")
  message(FATAL_ERROR "PE_DEPS_ARCHIVES: '${PE_DEPS_ARCHIVES}' is not a folder")
endif()

# pe_declare_release(name project version sha256): FetchContent_Declare of a GitHub release
# archive of xtensor-stack/<project>, or of the same file in PE_DEPS_ARCHIVES. With
# FIND_PACKAGE_ARGS, FetchContent_MakeAvailable tries find_package first, unless
# FETCHCONTENT_TRY_FIND_PACKAGE_MODE is NEVER.
function(pe_declare_release name project version sha256)
  if(PE_DEPS_ARCHIVES)
    set(url "${PE_DEPS_ARCHIVES}/${project}-${version}.tar.gz")
    if(NOT EXISTS "${url}")
      message(FATAL_ERROR "PE_DEPS_ARCHIVES: '${url}' is missing")
    endif()
  else()
    set(url "https://github.com/xtensor-stack/${project}/archive/refs/tags/${version}.tar.gz")
  endif()
  FetchContent_Declare(${name} URL "${url}" URL_HASH SHA256=${sha256}
                       DOWNLOAD_EXTRACT_TIMESTAMP TRUE ${ARGN})
endfunction()

# ---- xtl, xsimd, xtensor: the system's set, or the pinned set --------------------------------
pe_fetched(xtensor fetch_xtensor)
pe_fetched(xsimd fetch_xsimd)
pe_fetched(xtl fetch_xtl)
if(NOT fetch_xtensor AND NOT fetch_xsimd AND NOT fetch_xtl)
  # xtensor's package loads the xtl it was built against; xsimd is asked for separately.
  # No version in find_package: each package's version file accepts only its own major
  # release (xsimd 12 would refuse a request for 8.1); the oldest release is checked below.
  find_package(xtensor QUIET)
  if(xtensor_FOUND)
    find_package(xsimd QUIET)
    if(NOT xsimd_FOUND)
      pe_missing_message(text "xsimd (for xtensor ${xtensor_VERSION})" "apt install libxsimd-dev"
                         "dnf install xsimd-devel" "xsimd")
      message(FATAL_ERROR "${text}")
    endif()
    if(xtensor_VERSION VERSION_LESS PE_XTENSOR_OLDEST OR xsimd_VERSION VERSION_LESS PE_XSIMD_OLDEST)
      message(FATAL_ERROR "xtensor ${xtensor_VERSION} and xsimd ${xsimd_VERSION} were found, but "
                          "this book needs xtensor >= ${PE_XTENSOR_OLDEST} and xsimd >= "
                          "${PE_XSIMD_OLDEST}: update them, or configure with "
                          "-DPE_FETCH=ALL to build against the pinned releases")
    endif()
    set(PE_MATH_LIBRARIES_FROM "the system")
  endif()
endif()
if(NOT xtensor_FOUND)
  # Fetched, all three, so that they match. FETCHCONTENT_TRY_FIND_PACKAGE_MODE NEVER keeps a
  # system's lone xtl or xsimd out of the set; MakeAvailable also makes xtensor's own
  # find_package(xtl) and find_package(xsimd) find the fetched ones.
  set(FETCHCONTENT_TRY_FIND_PACKAGE_MODE NEVER)
  pe_declare_release(xtl xtl ${PE_XTL_VERSION} ${PE_XTL_SHA256} FIND_PACKAGE_ARGS)
  pe_declare_release(xsimd xsimd ${PE_XSIMD_VERSION} ${PE_XSIMD_SHA256} FIND_PACKAGE_ARGS)
  pe_declare_release(xtensor xtensor ${PE_XTENSOR_VERSION} ${PE_XTENSOR_SHA256} FIND_PACKAGE_ARGS)
  set(XTENSOR_USE_XSIMD ON CACHE BOOL "xtensor with xsimd (as this project compiles it)")
  FetchContent_MakeAvailable(xtl xsimd xtensor)
  # Their headers are system headers, as an installed package's are: warnings inside another
  # project's code must not stop a warnings-as-errors build. (FetchContent_Declare's own
  # SYSTEM option is mishandled by CMake 3.25 after URL_HASH.)
  set_target_properties(xtl xsimd xtensor PROPERTIES SYSTEM TRUE)
  unset(FETCHCONTENT_TRY_FIND_PACKAGE_MODE)
  set(xtl_VERSION ${PE_XTL_VERSION})
  set(xsimd_VERSION ${PE_XSIMD_VERSION})
  set(xtensor_VERSION ${PE_XTENSOR_VERSION})
  if(PE_DEPS_ARCHIVES)
    set(PE_MATH_LIBRARIES_FROM "their pinned releases (archives in ${PE_DEPS_ARCHIVES})")
  else()
    set(PE_MATH_LIBRARIES_FROM "their pinned releases (downloaded)")
  endif()
endif()
message(STATUS "xsimd ${xsimd_VERSION}, xtensor ${xtensor_VERSION}, xtl ${xtl_VERSION}: "
               "from ${PE_MATH_LIBRARIES_FROM}")
# The framework checks at compile time that the headers it sees are these releases
# (ag/src/library_versions.cpp): a stray copy elsewhere on the include path fails there.
set(PE_XSIMD_FOUND_VERSION ${xsimd_VERSION})
set(PE_XTENSOR_FOUND_VERSION ${xtensor_VERSION})
set(PE_XTL_FOUND_VERSION ${xtl_VERSION})

# ---- OpenMP: optional --------------------------------------------------------------------------
# pe_threads: what every target that runs kernels links. Without OpenMP the kernels' `omp`
# pragmas are ignored (and not warned about): one thread, the same numbers bit for bit.
if(NOT PE_OPENMP MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PE_OPENMP must be AUTO, ON or OFF, not '${PE_OPENMP}'")
endif()
add_library(pe_threads INTERFACE)
if(NOT PE_OPENMP STREQUAL "OFF")
  find_package(OpenMP QUIET)
endif()
if(OpenMP_CXX_FOUND)
  target_link_libraries(pe_threads INTERFACE OpenMP::OpenMP_CXX)
  message(STATUS "OpenMP ${OpenMP_CXX_VERSION}: kernels run on all cores")
elseif(PE_OPENMP STREQUAL "ON")
  message(FATAL_ERROR "PE_OPENMP=ON but this compiler has no OpenMP (on macOS: brew install "
                      "libomp; elsewhere the compiler's OpenMP package), or configure with "
                      "-DPE_OPENMP=AUTO to build without it")
else()
  target_compile_options(pe_threads INTERFACE -Wno-unknown-pragmas)
  message(STATUS "OpenMP: not used (${PE_OPENMP}): everything runs on one thread, with the "
                 "same results; pe table --jobs still trains runs side by side")
endif()

# ---- Header-only libraries every system ships ---------------------------------------------------
find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  pe_missing_message(text "CLI11" "apt install libcli11-dev" "dnf install cli11-devel" "cli11")
  message(FATAL_ERROR "${text}")
endif()
find_package(nlohmann_json 3.9 QUIET)
if(NOT nlohmann_json_FOUND)
  pe_missing_message(text "nlohmann_json" "apt install nlohmann-json3-dev" "dnf install json-devel"
                     "nlohmann-json")
  message(FATAL_ERROR "${text}")
endif()

# ---- Tests: GoogleTest and stb_image ----------------------------------------------------------
if(PE_BUILD_TESTS)
  # A GoogleTest built from source where the system has none, or where its library does not
  # fit this compiler's standard library (clang with libc++: PE_FETCH=googletest, with
  # FETCHCONTENT_SOURCE_DIR_GOOGLETEST=/usr/src/googletest on Debian).
  pe_fetched(googletest fetch_googletest)
  if(fetch_googletest)
    set(FETCHCONTENT_TRY_FIND_PACKAGE_MODE NEVER)
  endif()
  FetchContent_Declare(googletest GIT_REPOSITORY https://github.com/google/googletest.git
                       GIT_TAG ${PE_GOOGLETEST_COMMIT} FIND_PACKAGE_ARGS NAMES GTest)
  set(INSTALL_GTEST OFF CACHE BOOL "")
  set(BUILD_GMOCK OFF CACHE BOOL "")
  FetchContent_MakeAvailable(googletest)
  unset(FETCHCONTENT_TRY_FIND_PACKAGE_MODE)
  if(TARGET gtest)  # built here: its headers are system headers too
    set_target_properties(gtest gtest_main PROPERTIES SYSTEM TRUE)
  endif()
  if(NOT TARGET GTest::gtest_main AND TARGET gtest_main)
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()

  # stb_image decodes the PNG files the figure tests draw: a single header (Debian and Arch
  # ship it in stb/, Fedora as stb_image-devel), its implementation compiled once in
  # lab/tests/stb_image.cpp.
  pe_fetched(stb fetch_stb)
  if(NOT fetch_stb)
    find_path(PE_STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb)
  endif()
  if(fetch_stb OR NOT PE_STB_INCLUDE_DIR)
    FetchContent_Declare(stb GIT_REPOSITORY https://github.com/nothings/stb.git
                         GIT_TAG ${PE_STB_COMMIT})
    FetchContent_MakeAvailable(stb)
    set(PE_STB_INCLUDE_DIR ${stb_SOURCE_DIR})
    if(NOT EXISTS "${PE_STB_INCLUDE_DIR}/stb_image.h")
      message(FATAL_ERROR "stb: ${PE_STB_INCLUDE_DIR} has no stb_image.h")
    endif()
  endif()
  add_library(pe_stb_image INTERFACE)
  target_include_directories(pe_stb_image SYSTEM INTERFACE ${PE_STB_INCLUDE_DIR})
endif()

# ---- Benchmarks: optional ---------------------------------------------------------------------
# programs/bench/ compares with a BLAS and uses Google Benchmark; without them it is left out, with one
# line here (nothing the README's two commands need lives there).
if(PE_BUILD_BENCH)
  find_package(benchmark QUIET)
  find_package(BLAS QUIET)
  if(NOT benchmark_FOUND OR NOT BLAS_FOUND)
    message(STATUS "Benchmarks: not built (they need Google Benchmark and a BLAS: Debian/Ubuntu "
                   "libbenchmark-dev libopenblas-dev; Fedora google-benchmark-devel openblas-devel; "
                   "macOS brew install google-benchmark openblas)")
    set(PE_BUILD_BENCH OFF)
  endif()
endif()
