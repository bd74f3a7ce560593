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

/// Where value (r, p) of a packed A micro-panel [MR rows, depth] lives: at
/// r * row_stride + p * depth_stride. Whichever layout makes packing a plain copy is used:
/// rows one after the other when op(A)'s rows are contiguous (A not transposed), the MR
/// values of each step p side by side when its columns are (A transposed). The microkernel
/// reads either, so neither case needs a transposing copy.
struct PanelLayout {
  std::size_t row_stride;
  std::size_t depth_stride;
};

/// dst[r][p] = src[r * src_stride + p] for r < rows, p < depth; rows rows..kRows-1 are zero.
/// Copies `rows` contiguous lines into a [kRows, depth] panel.
template <std::size_t kRows, class T>
void pack_rows(const T* src, std::size_t src_stride, std::size_t rows, std::size_t depth,
               T* dst) {
  for (std::size_t r = 0; r < rows; ++r)
    std::copy_n(src + r * src_stride, depth, dst + r * depth);
  std::fill_n(dst + rows * depth, (kRows - rows) * depth, T(0));
}

/// dst[p][l] = src[p * src_stride + l] for l < width, p < depth; columns width..kCols-1
/// are zero. Copies `depth` contiguous runs into a [depth, kCols] panel.
template <std::size_t kCols, class T>
void pack_runs(const T* src, std::size_t src_stride, std::size_t width, std::size_t depth,
               T* dst) {
  for (std::size_t p = 0; p < depth; ++p, dst += kCols) {
    const T* run = src + p * src_stride;
    if (width == kCols) {
      std::copy_n(run, kCols, dst);  // constant length: compiles to a few vector moves
    } else {
      std::copy_n(run, width, dst);
      std::fill(dst + width, dst + kCols, T(0));
    }
  }
}

/// dst[p][l] = src[l * src_stride + p] for l < width, p < depth; columns width..kCols-1
/// are zero. Transposes `width` contiguous lines into a [depth, kCols] panel.
template <std::size_t kCols, class T>
void pack_lines_transposed(const T* src, std::size_t src_stride, std::size_t width,
                           std::size_t depth, T* dst) {
  if (width < kCols) {
    for (std::size_t p = 0; p < depth; ++p)
      std::fill(dst + p * kCols + width, dst + (p + 1) * kCols, T(0));
  }
  // Each line is read sequentially; its values land kCols apart in the panel.
  for (std::size_t l = 0; l < width; ++l) {
    const T* line = src + l * src_stride;
    for (std::size_t p = 0; p < depth; ++p) dst[p * kCols + l] = line[p];
  }
}

/// Packs op(A)[rows, depth], whose (0, 0) element is `a`, into ceil(rows / MR) micro-panels
/// of MR rows, MR * depth values each, one after the other. Returns their layout.
template <class T>
PanelLayout pack_a_block(bool trans_a, const T* a, std::size_t lda, std::size_t rows,
                         std::size_t depth, T* dst) {
  constexpr std::size_t MR = Blocking<T>::MR;
  for (std::size_t i = 0; i < rows; i += MR, dst += MR * depth) {
    const std::size_t panel_rows = std::min(MR, rows - i);
    if (trans_a) {
      pack_runs<MR>(a + i, lda, panel_rows, depth, dst);
    } else {
      pack_rows<MR>(a + i * lda, lda, panel_rows, depth, dst);
    }
  }
  return trans_a ? PanelLayout{1, MR} : PanelLayout{depth, 1};
}

/// Packs op(B)[depth, cols], whose (0, 0) element is `b`, into ceil(cols / NR)
/// micro-panels [depth, NR], one after the other.
template <class T>
void pack_b_block(bool trans_b, const T* b, std::size_t ldb, std::size_t depth,
                  std::size_t cols, T* dst) {
  constexpr std::size_t NR = Blocking<T>::NR;
  for (std::size_t j = 0; j < cols; j += NR, dst += NR * depth) {
    const std::size_t panel_cols = std::min(NR, cols - j);
    if (trans_b) {
      pack_lines_transposed<NR>(b + j * ldb, ldb, panel_cols, depth, dst);
    } else {
      pack_runs<NR>(b + j, ldb, panel_cols, depth, dst);
    }
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
                            const T* packed_a, PanelLayout a_layout, const T* packed_b,
                            T beta, T* c, std::size_t ldc) {
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
        microkernel<T, MR, Tile::kVectorsPerRow>(depth, a_panel, a_layout.row_stride,
                                                 a_layout.depth_stride, b_panel, alpha, beta,
                                                 c_tile, ldc);
      } else {
        microkernel<T, MR, Tile::kVectorsPerRow>(depth, a_panel, a_layout.row_stride,
                                                 a_layout.depth_stride, b_panel, T(1), T(0),
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
      const T* b_block = trans_b ? B + j0 * ldb + p0 : B + p0 * ldb + j0;
      pack_b_block(trans_b, b_block, ldb, depth, cols, packed_b);
      for (std::size_t i0 = 0; i0 < M; i0 += Tile::MC) {
        const std::size_t rows = std::min(Tile::MC, M - i0);
        const T* a_block = trans_a ? A + p0 * lda + i0 : A + i0 * lda + p0;
        const PanelLayout a_layout = pack_a_block(trans_a, a_block, lda, rows, depth, packed_a);
        multiply_packed_blocks(rows, cols, depth, alpha, packed_a, a_layout, packed_b,
                               slice_beta, C + i0 * ldc + j0, ldc);
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
