// The table of kernels that one SIMD path provides: what dispatch.cpp chooses between.
#pragma once
#include <cstddef>
#include <type_traits>

#include "ag/kernels/gemm.hpp"

namespace ag::kernels {

/// One function pointer per kernel, for element type T. The signatures are those of the
/// public kernels in elementwise.hpp, softmax.hpp, layernorm.hpp, gemm.hpp and
/// columns.hpp.
template <class T>
struct KernelTable {
  void (*add)(const T*, const T*, T*, std::size_t);
  void (*sub)(const T*, const T*, T*, std::size_t);
  void (*mul)(const T*, const T*, T*, std::size_t);
  void (*div)(const T*, const T*, T*, std::size_t);
  void (*axpy)(T, const T*, T*, std::size_t);
  void (*exp)(const T*, T*, std::size_t);
  void (*relu)(const T*, T*, std::size_t);
  void (*relu_backward)(const T*, const T*, T*, std::size_t);
  void (*softmax_rows)(const T*, T*, std::size_t, std::size_t);
  void (*softmax_rows_backward)(const T*, const T*, T*, std::size_t, std::size_t);
  void (*layernorm_rows)(const T*, const T*, const T*, T*, T*, T*, std::size_t, std::size_t, T);
  void (*layernorm_rows_backward)(const T*, const T*, const T*, const T*, const T*, T*, T*, T*,
                                  std::size_t, std::size_t);
  void (*gemm)(bool, bool, std::size_t, std::size_t, std::size_t, T, const T*, std::size_t,
               const T*, std::size_t, T, T*, std::size_t);
  void (*gemm_batched)(const BatchedGemm<T>&);
  void (*bias_relu_backward)(const T*, const T*, T*, T*, std::size_t, std::size_t);
  std::size_t width;  ///< SIMD lanes of one register (1 for the scalar path)
};

/// Everything one instruction set provides, under the name PE_SIMD knows it by.
struct SimdPath {
  const char* name;
  KernelTable<float> f32;
  KernelTable<double> f64;

  template <class T>
  const KernelTable<T>& table() const {
    if constexpr (std::is_same_v<T, float>) {
      return f32;
    } else {
      return f64;
    }
  }
};

}  // namespace ag::kernels
