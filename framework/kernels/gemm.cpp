// General matrix multiply, BLIS/GotoBLAS style.
//
// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C is computed in three layers of blocks,
// each sized for one level of the memory hierarchy:
//
//   for each NC-wide column block of op(B)                         (the packed B block: L3)
//     for each KC-deep slice of K: pack op(B)[KC, NC]
//       for each MC-tall row block of op(A): pack op(A)[MC, KC]    (the packed A block: L2)
//         for each NR-wide micro-panel of the B block              (one B micro-panel: L1)
//           for each MR-tall micro-panel of the A block
//             microkernel: C[MR, NR] += A micro-panel * B micro-panel   (registers)
//
// Packing copies op(A) and op(B) into contiguous, zero-padded micro-panels in exactly the
// order the microkernel reads them, so transposes, leading dimensions and ragged edges are
// all dealt with there, and the microkernel sees only one memory layout.
#include "gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#include "gemm_microkernel.hpp"
#include "simd.hpp"

namespace ag::kernels {
namespace {

// ---------------------------------------------------------------------------------------
// Blocking parameters.
// ---------------------------------------------------------------------------------------

/// Register tile MR x NR and cache blocks KC, MC, NC for element type T.
/// MR x NR = 6 x (2 vectors): 12 accumulators + 2 B vectors + 1 broadcast A value fill the
/// 16 AVX2 registers, and 12 independent FMA chains cover the FMA latency on two pipes.
template <class T>
struct Blocking {
  static constexpr std::size_t kVectorsPerRow = 2;
  static constexpr std::size_t MR = 6;
  static constexpr std::size_t NR = kVectorsPerRow * kWidth<T>;
  // One B micro-panel (KC x NR) stays in L1 while the A block streams past it.
  static constexpr std::size_t KC = 256;
  // The packed A block (MC x KC) stays in L2; MC is a multiple of MR.
  static constexpr std::size_t MC = 24 * MR;
  // The packed B block (KC x NC) stays in L3; NC is a multiple of NR.
  static constexpr std::size_t NC = 4096 / sizeof(T) * 4 / NR * NR;
};

/// Rounds n up to a multiple of `step`.
constexpr std::size_t round_up(std::size_t n, std::size_t step) {
  return (n + step - 1) / step * step;
}

// ---------------------------------------------------------------------------------------
// Packing buffers.
// ---------------------------------------------------------------------------------------

/// A growable, 64-byte aligned scratch array. One per thread and element type (see
/// scratch()), so concurrent gemm calls from different threads never share one.
template <class T>
class AlignedBuffer {
 public:
  /// Returns space for at least n elements; the contents are unspecified.
  T* reserve(std::size_t n) {
    if (n > capacity_) {
      const std::size_t bytes = round_up(n * sizeof(T), kAlignment);
      data_.reset(static_cast<T*>(std::aligned_alloc(kAlignment, bytes)));
      if (!data_) throw std::bad_alloc();
      capacity_ = bytes / sizeof(T);
    }
    return data_.get();
  }

 private:
  static constexpr std::size_t kAlignment = 64;  // a cache line; ≥ any SIMD alignment
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t capacity_ = 0;
};

/// The calling thread's buffers for the packed A block and the packed B block.
template <class T>
struct Scratch {
  AlignedBuffer<T> a;
  AlignedBuffer<T> b;
};

template <class T>
Scratch<T>& scratch() {
  thread_local Scratch<T> buffers;
  return buffers;
}

// ---------------------------------------------------------------------------------------
// Packing.
// ---------------------------------------------------------------------------------------

/// A read-only view of op(X) for a row-major X: element (i, j) of op(X), where op(X) is X
/// or, when `transposed`, the transpose of X.
template <class T>
struct MatrixView {
  const T* data;
  std::size_t ld;
  bool transposed;

  /// Distance in memory between (i, j) and (i + 1, j), and between (i, j) and (i, j + 1).
  std::size_t row_step() const { return transposed ? 1 : ld; }
  std::size_t col_step() const { return transposed ? ld : 1; }
  const T* at(std::size_t i, std::size_t j) const {
    return data + i * row_step() + j * col_step();
  }
};

/// Packs `width` lines of op(X) into one micro-panel of `kPanel` interleaved lines.
/// Line l (0 <= l < width) starts at src + l * line_step; element p of a line is at
/// src + l * line_step + p * elem_step. The panel holds, for p = 0..depth-1, the kPanel
/// values line[0][p], line[1][p], ..., with the lines past `width` filled with zeros.
/// When elem_step == 1 the lines are contiguous rows and are read as rows (a transpose);
/// when line_step == 1 each step p is one contiguous run, copied as such.
template <std::size_t kPanel, class T>
void pack_micro_panel(const T* src, std::size_t line_step, std::size_t elem_step,
                      std::size_t width, std::size_t depth, T* dst) {
  if (width == kPanel && line_step == 1) {
    // Full panel from contiguous runs: copy kPanel values per step.
    for (std::size_t p = 0; p < depth; ++p) {
      const T* run = src + p * elem_step;
      for (std::size_t l = 0; l < kPanel; ++l) dst[l] = run[l];
      dst += kPanel;
    }
    return;
  }
  if (width == kPanel) {
    // Full panel from strided lines: read each line sequentially, scatter into the panel.
    for (std::size_t l = 0; l < kPanel; ++l) {
      const T* line = src + l * line_step;
      for (std::size_t p = 0; p < depth; ++p) dst[p * kPanel + l] = line[p * elem_step];
    }
    return;
  }
  // Ragged edge: the valid lines, then zeros so the microkernel may compute a full tile.
  for (std::size_t p = 0; p < depth; ++p) {
    for (std::size_t l = 0; l < width; ++l) dst[l] = src[l * line_step + p * elem_step];
    for (std::size_t l = width; l < kPanel; ++l) dst[l] = T(0);
    dst += kPanel;
  }
}

/// Packs the block op(A)[rows, depth] starting at op(A)(0, 0) = a.at(i0, p0) into
/// ceil(rows / MR) micro-panels of MR rows, each [depth][MR], one after the other.
template <class T>
void pack_a_block(const MatrixView<T>& a, std::size_t i0, std::size_t p0, std::size_t rows,
                  std::size_t depth, T* dst) {
  constexpr std::size_t MR = Blocking<T>::MR;
  for (std::size_t i = 0; i < rows; i += MR) {
    pack_micro_panel<MR>(a.at(i0 + i, p0), a.row_step(), a.col_step(),
                         std::min(MR, rows - i), depth, dst);
    dst += MR * depth;
  }
}

/// Packs the block op(B)[depth, cols] starting at b.at(p0, j0) into ceil(cols / NR)
/// micro-panels of NR columns, each [depth][NR], one after the other.
template <class T>
void pack_b_block(const MatrixView<T>& b, std::size_t p0, std::size_t j0, std::size_t depth,
                  std::size_t cols, T* dst) {
  constexpr std::size_t NR = Blocking<T>::NR;
  for (std::size_t j = 0; j < cols; j += NR) {
    pack_micro_panel<NR>(b.at(p0, j0 + j), b.col_step(), b.row_step(),
                         std::min(NR, cols - j), depth, dst);
    dst += NR * depth;
  }
}

// ---------------------------------------------------------------------------------------
// The macro-kernel: one packed A block against one packed B block.
// ---------------------------------------------------------------------------------------

/// C[rows, cols] = alpha * (packed A block [rows, depth]) * (packed B block [depth, cols])
///                 + beta * C; with beta == 0, C is not read.
/// Full MR x NR tiles are written in place; ragged edge tiles go through a small
/// temporary, so the microkernel always computes a whole tile from the zero-padded panels.
template <class T>
void multiply_packed_blocks(std::size_t rows, std::size_t cols, std::size_t depth, T alpha,
                            const T* packed_a, const T* packed_b, T beta, T* c,
                            std::size_t ldc) {
  using Tile = Blocking<T>;
  constexpr std::size_t MR = Tile::MR, NR = Tile::NR;
  alignas(64) T edge_tile[MR * NR];

  for (std::size_t j = 0; j < cols; j += NR) {
    const T* b_panel = packed_b + j * depth;
    const std::size_t tile_cols = std::min(NR, cols - j);
    for (std::size_t i = 0; i < rows; i += MR) {
      const T* a_panel = packed_a + i * depth;
      const std::size_t tile_rows = std::min(MR, rows - i);
      T* c_tile = c + i * ldc + j;
      if (tile_rows == MR && tile_cols == NR) {
        microkernel<T, MR, Tile::kVectorsPerRow>(depth, a_panel, b_panel, alpha, beta,
                                                 c_tile, ldc);
      } else {
        microkernel<T, MR, Tile::kVectorsPerRow>(depth, a_panel, b_panel, T(1), T(0),
                                                 edge_tile, NR);
        for (std::size_t r = 0; r < tile_rows; ++r) {
          for (std::size_t s = 0; s < tile_cols; ++s) {
            T& out = c_tile[r * ldc + s];
            const T product = alpha * edge_tile[r * NR + s];
            out = beta == T(0) ? product : product + beta * out;
          }
        }
      }
    }
  }
}

/// C[M, N] = beta * C, without reading C when beta == 0 (the K == 0 or alpha == 0 case).
template <class T>
void scale_c(std::size_t M, std::size_t N, T beta, T* C, std::size_t ldc) {
  for (std::size_t i = 0; i < M; ++i) {
    T* row = C + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + N, T(0));
    } else if (beta != T(1)) {
      for (std::size_t j = 0; j < N; ++j) row[j] *= beta;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The fast gemm.
// ---------------------------------------------------------------------------------------

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  using Tile = Blocking<T>;
  if (M == 0 || N == 0) return;
  if (K == 0 || alpha == T(0)) {
    // As in BLAS, A and B are not read: the product is exactly zero.
    scale_c(M, N, beta, C, ldc);
    return;
  }
  const MatrixView<T> a{A, lda, trans_a};
  const MatrixView<T> b{B, ldb, trans_b};

  Scratch<T>& buffers = scratch<T>();
  const std::size_t kc_max = std::min(Tile::KC, K);
  T* packed_a = buffers.a.reserve(round_up(std::min(Tile::MC, M), Tile::MR) * kc_max);
  T* packed_b = buffers.b.reserve(round_up(std::min(Tile::NC, N), Tile::NR) * kc_max);

  for (std::size_t j0 = 0; j0 < N; j0 += Tile::NC) {
    const std::size_t cols = std::min(Tile::NC, N - j0);
    for (std::size_t p0 = 0; p0 < K; p0 += Tile::KC) {
      const std::size_t depth = std::min(Tile::KC, K - p0);
      // The first K slice applies the caller's beta; later slices accumulate onto it.
      const T slice_beta = p0 == 0 ? beta : T(1);
      pack_b_block(b, p0, j0, depth, cols, packed_b);
      for (std::size_t i0 = 0; i0 < M; i0 += Tile::MC) {
        const std::size_t rows = std::min(Tile::MC, M - i0);
        pack_a_block(a, i0, p0, rows, depth, packed_a);
        multiply_packed_blocks(rows, cols, depth, alpha, packed_a, packed_b, slice_beta,
                               C + i0 * ldc + j0, ldc);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The scalar reference.
// ---------------------------------------------------------------------------------------

namespace scalar {

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      T sum = T(0);
      for (std::size_t p = 0; p < K; ++p) {
        const T a = trans_a ? A[p * lda + i] : A[i * lda + p];
        const T b = trans_b ? B[j * ldb + p] : B[p * ldb + j];
        sum += a * b;
      }
      T& out = C[i * ldc + j];
      out = beta == T(0) ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float,
                          const float*, std::size_t, const float*, std::size_t, float,
                          float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double,
                           const double*, std::size_t, const double*, std::size_t, double,
                           double*, std::size_t);

}  // namespace scalar

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float,
                          const float*, std::size_t, const float*, std::size_t, float,
                          float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double,
                           const double*, std::size_t, const double*, std::size_t, double,
                           double*, std::size_t);

}  // namespace ag::kernels
