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
# Multiply-adds fused wherever the target has FMA, across statements: g++'s default, which
# clang applies only within one expression unless told. The kernels rely on it (xsimd 8.1's
# AVX-512 fma is a multiply and an add that g++ fuses) and so do their results: with one rule
# for both compilers the same source rounds alike under g++ and clang, with any xsimd release.
add_compile_options(-ffp-contract=fast)

if(PE_ARCH STREQUAL "auto")
  # The default: the program is compiled for the target's baseline and the kernels once per
  # instruction set, chosen at run time (framework/CMakeLists.txt).
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
