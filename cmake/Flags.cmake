# Compiler flags, set once for every target so that all translation units agree on
# xtensor's types (XTENSOR_USE_XSIMD and the SIMD width change them).
add_compile_options(-Wall -Wextra -Wpedantic)
# CI builds with warnings as errors under every compiler it checks (g++ 12, clang 16); a
# reader's newer compiler may warn about something new, which should not stop the book.
option(PE_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (CI)" OFF)
if(PE_WARNINGS_AS_ERRORS)
  add_compile_options(-Werror)
endif()
# No unsafe floating-point flags (the "fast math" family): they reorder and drop operations
# that gradient checks depend on.
# -fno-math-errno only stops sqrt and friends from setting errno, which nothing here reads;
# it lets the compiler vectorise loops that call them (the optimiser's update).
add_compile_options(-fno-math-errno)
# A multiply-add is fused only where the code says so (compat::fma, std::fma), never by the
# compiler on its own: g++ fuses a * b + c across statements wherever the target has FMA,
# clang only within one expression, and where each fuses depends on inlining and on how it
# vectorises a loop (an in-place call rounded differently from an out-of-place one). With
# this, the same source rounds alike under g++ and clang, with any xsimd release.
add_compile_options(-ffp-contract=off)

if(PE_ARCH STREQUAL "auto")
  # The default: the program is compiled for the target's baseline and the kernels once per
  # instruction set, chosen at run time (ag/CMakeLists.txt).
elseif(PE_ARCH STREQUAL "avx2")
  # Expert options: one instruction set, fixed at compile time, for everything.
  add_compile_options(-mavx2 -mfma)
elseif(PE_ARCH STREQUAL "native")
  add_compile_options(-march=native)
elseif(PE_ARCH STREQUAL "sse2")
  # x86-64 baseline: nothing to add.
else()
  message(FATAL_ERROR "PE_ARCH must be auto, avx2, native or sse2, not '${PE_ARCH}'")
endif()
add_compile_definitions(XTENSOR_USE_XSIMD)
