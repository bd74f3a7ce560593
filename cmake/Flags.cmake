# Compiler flags, set once for every target so that all translation units agree on
# xtensor's types (XTENSOR_USE_XSIMD and the SIMD width change them).
add_compile_options(-Wall -Wextra -Wpedantic)
# No unsafe floating-point flags (the "fast math" family): they reorder and drop operations
# that gradient checks depend on.
# -fno-math-errno only stops sqrt and friends from setting errno, which nothing here reads;
# it lets the compiler vectorise loops that call them (the optimiser's update).
add_compile_options(-fno-math-errno)

if(PE_ARCH STREQUAL "avx2")
  # xsimd 8's runtime detection misreports AVX on these machines, so the target is fixed at
  # compile time. AVX2 + FMA is on every machine this book is built on.
  add_compile_options(-mavx2 -mfma)
elseif(PE_ARCH STREQUAL "native")
  add_compile_options(-march=native)
elseif(PE_ARCH STREQUAL "sse2")
  # x86-64 baseline: nothing to add.
else()
  message(FATAL_ERROR "PE_ARCH must be avx2, native or sse2, not '${PE_ARCH}'")
endif()
add_compile_definitions(XTENSOR_USE_XSIMD)
