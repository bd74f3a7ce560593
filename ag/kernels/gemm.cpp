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
// Packing copies op(A) and op(B) into contiguous, zero-padded micro-panels in the order the
// microkernel reads them, so transposes, leading dimensions and ragged edges are all dealt
// with there. Packing is kept to plain copies wherever possible (it costs 5-15% of the
// time even so): B micro-panels are always [depth][NR] (the microkernel loads rows of them
// as vectors) and need a transpose only when B is transposed; A micro-panels come in
// whichever of two layouts the source allows without one (see PanelLayout). Runs of constant
// length are copied in vector moves, not memmove calls (copy_run). Where a product has only
// one B micro-panel (at most NR columns: the head's 26 letters), each A micro-panel would be
// read once, so A is not packed at all but read where it is stored (product_share).
//
// Threads: gemm_batched runs the products of a batch on separate threads, and splits one large
// product by rows of C: the threads pack one shared copy of each op(B) block together, then
// each packs its own rows of op(A) and multiplies them (run_product). Which thread computes
// a tile changes nothing in it: every element of C is the same sum in the same order, fixed
// by the shape alone (the K slices). Concurrent calls are safe as long as their C arrays do
// not overlap; each thread packs into its own buffers (see scratch()).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "ag/kernels/gemm_microkernel.hpp"
#include "ag/kernels/simd_variant.hpp"
#include "ag/kernels/team.hpp"

namespace ag::kernels::AG_SIMD_NS {
namespace {

// ---------------------------------------------------------------------------------------
// Tiles and blocking parameters.
// ---------------------------------------------------------------------------------------

// [blocking]
/// A register tile of MR rows by kVectors vectors, and the cache blocks KC, MC, NC around it,
/// for element type T.
/// With 16 registers (SSE2, AVX2): MR x NR = 6 x (2 vectors): 12 accumulators + 2 B vectors
/// + 1 broadcast A value, and 12 independent FMA chains cover the FMA latency on two pipes.
/// (Measured against 4 x 3, 5 x 2 and 3 x 4 vectors: 6 x 2 is as fast or faster everywhere.)
/// With AVX-512's 32 registers: 6 x (4 vectors), 24 accumulators + 4 B vectors + 1
/// broadcast (measured on Zen 5 against 14 x 2, 12 x 2 and 8 x 3 vectors: 6 x 4 was 5-20%
/// faster at the transformer shapes), and for products at most 32 columns wide (attention's
/// scores, the head's 26 letters), where the 64-wide tile would be half padding, 12 x (2
/// vectors): as many accumulators, on columns that exist.
template <class T, std::size_t MR_, std::size_t kVectors>
struct Tile {
  static constexpr std::size_t kVectorsPerRow = kVectors;
  static constexpr std::size_t MR = MR_;
  static constexpr std::size_t NR = kVectorsPerRow * kWidth<T>;
  // One B micro-panel (KC x NR: 16 KiB for float; 96 KiB on AVX-512, so there it is L2's)
  // stays close while the A block streams past it.
  // Measured on Zen 5 (48 KiB L1d, 1 MiB L2): with AVX2, KC from 192 to 512 and MC from 96
  // to 384 are all within a few percent; these sit in the middle. With AVX-512, KC = 384
  // was 5-10% faster than 256 or 512 at K = 1024 (fewer passes over C) and equal elsewhere.
  // KC is the same for every tile of a path: it fixes the order of the additions into C
  // (one sum per slice), so the tile chosen for a shape never changes a result.
#if AG_SIMD_VARIANT == 2
  static constexpr std::size_t KC = 384;
#else
  static constexpr std::size_t KC = 256;
#endif
  // The packed A block (MC x KC: 144 KiB for float, 216 KiB on AVX-512) stays in L2; MC is
  // a multiple of MR.
  static constexpr std::size_t MC = 144;
  static_assert(MC % MR == 0);
  // The packed B block (KC x NC: 4 MiB) stays in L3; NC is a multiple of NR.
  static constexpr std::size_t NC = (std::size_t(4) << 20) / (KC * sizeof(T)) / NR * NR;
};

#if AG_SIMD_VARIANT == 2
template <class T>
using WideTile = Tile<T, 6, 4>;
template <class T>
using NarrowTile = Tile<T, 12, 2>;
#else
template <class T>
using WideTile = Tile<T, 6, 2>;
template <class T>
using NarrowTile = WideTile<T>;  // 16 registers: the wide tile is already 2 vectors wide
#endif
// [blocking]

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
  static constexpr std::size_t kAlignment = 64;  // a cache line; >= any SIMD alignment
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
/// The micro-panel of rows i .. i + MR - 1 of a block starts at i * panel_stride: MR * depth
/// values apart when packed, MR rows of A apart when read in place (see product_share).
struct PanelLayout {
  std::size_t row_stride;
  std::size_t depth_stride;
  std::size_t panel_stride;
};

/// dst[r][p] = src[r * src_stride + p] for r < rows, p < depth; rows rows..kRows-1 are zero.
/// Copies `rows` contiguous lines into a [kRows, depth] panel.
template <std::size_t kRows, class T>
void pack_rows(const T* src, std::size_t src_stride, std::size_t rows, std::size_t depth, T* dst) {
  for (std::size_t r = 0; r < rows; ++r) std::copy_n(src + r * src_stride, depth, dst + r * depth);
  std::fill_n(dst + rows * depth, (kRows - rows) * depth, T(0));
}

/// The side of the square blocks that transposing packs move at once: 8 floats or 4 doubles
/// (one 256-bit register per line) wherever AVX is there, else one vector.
template <class T>
#if defined(__AVX__)
inline constexpr std::size_t kSquare = 32 / sizeof(T);
#else
inline constexpr std::size_t kSquare = kWidth<T>;
#endif

/// Transposes a square block of kSquare<T> lines of kSquare<T> values: for l, p < W,
/// dst[p * dst_stride + l] = src[l * src_stride + p]. With 256-bit vectors this is the
/// usual in-register shuffle network (W loads, W stores, 3 W shuffles); other targets take
/// the scalar loop.
template <class T>
void transpose_square(const T* src, std::size_t src_stride, T* dst, std::size_t dst_stride) {
  constexpr std::size_t W = kSquare<T>;
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, float> && W == 8) {
    __m256 r[8], t[8];
    for (std::size_t l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(src + l * src_stride);
    for (std::size_t l = 0; l < 8; l += 2) {  // interleave pairs of lines
      t[l] = _mm256_unpacklo_ps(r[l], r[l + 1]);
      t[l + 1] = _mm256_unpackhi_ps(r[l], r[l + 1]);
    }
    for (std::size_t l = 0; l < 8; l += 4) {  // then pairs of pairs
      r[l] = _mm256_shuffle_ps(t[l], t[l + 2], 0x44);
      r[l + 1] = _mm256_shuffle_ps(t[l], t[l + 2], 0xEE);
      r[l + 2] = _mm256_shuffle_ps(t[l + 1], t[l + 3], 0x44);
      r[l + 3] = _mm256_shuffle_ps(t[l + 1], t[l + 3], 0xEE);
    }
    for (std::size_t p = 0; p < 4; ++p) {  // then swap 128-bit halves between lines 0-3 and 4-7
      _mm256_storeu_ps(dst + p * dst_stride, _mm256_permute2f128_ps(r[p], r[p + 4], 0x20));
      _mm256_storeu_ps(dst + (p + 4) * dst_stride, _mm256_permute2f128_ps(r[p], r[p + 4], 0x31));
    }
    return;
  }
  if constexpr (std::is_same_v<T, double> && W == 4) {
    __m256d r[4], t[4];
    for (std::size_t l = 0; l < 4; ++l) r[l] = _mm256_loadu_pd(src + l * src_stride);
    t[0] = _mm256_unpacklo_pd(r[0], r[1]);
    t[1] = _mm256_unpackhi_pd(r[0], r[1]);
    t[2] = _mm256_unpacklo_pd(r[2], r[3]);
    t[3] = _mm256_unpackhi_pd(r[2], r[3]);
    for (std::size_t p = 0; p < 2; ++p) {
      _mm256_storeu_pd(dst + p * dst_stride, _mm256_permute2f128_pd(t[p], t[p + 2], 0x20));
      _mm256_storeu_pd(dst + (p + 2) * dst_stride, _mm256_permute2f128_pd(t[p], t[p + 2], 0x31));
    }
    return;
  }
#endif
  for (std::size_t l = 0; l < W; ++l)
    for (std::size_t p = 0; p < W; ++p) dst[p * dst_stride + l] = src[l * src_stride + p];
}

/// dst[p][l] = src[l * src_stride + p] for l < width, p < depth; columns width..kCols-1
/// are zero. Transposes `width` contiguous lines into a [depth, kCols] panel, in square
/// W x W blocks where the panel is full and value by value at the ragged ends.
template <std::size_t kCols, class T>
void pack_lines_transposed(const T* src, std::size_t src_stride, std::size_t width,
                           std::size_t depth, T* dst) {
  constexpr std::size_t W = kSquare<T>;
  std::size_t p_done = 0;
  if (width == kCols) {
    static_assert(kCols % W == 0);
    for (; p_done + W <= depth; p_done += W)
      for (std::size_t l = 0; l < kCols; l += W)
        transpose_square(src + l * src_stride + p_done, src_stride, dst + p_done * kCols + l,
                         kCols);
  }
  for (std::size_t p = p_done; p < depth; ++p) {
    for (std::size_t l = 0; l < width; ++l) dst[p * kCols + l] = src[l * src_stride + p];
    std::fill(dst + p * kCols + width, dst + (p + 1) * kCols, T(0));
  }
}

/// dst[l] = src[l] for l < kCount, in unaligned vector moves and one constant-size copy for
/// the rest. (std::copy_n of a constant 64 floats is a call to memmove, and its dispatch
/// costs more than the copy: packing copies millions of such runs.)
template <std::size_t kCount, class T>
inline void copy_run(const T* src, T* dst) {
  using V = Batch<T>;
  constexpr std::size_t W = V::size, kWhole = kCount / W * W;
#pragma GCC unroll 16
  for (std::size_t l = 0; l < kWhole; l += W) V::load_unaligned(src + l).store_unaligned(dst + l);
  if constexpr (kCount > kWhole)
    __builtin_memcpy(dst + kWhole, src + kWhole, (kCount - kWhole) * sizeof(T));
}

/// dst[l] = src[l] for l < count, dst[l] = 0 for count <= l < kCount (count < kCount): the
/// ragged end of a run. With AVX-512, in masked vector loads, which read nothing past `count`.
template <std::size_t kCount, class T>
inline void copy_run_padded(const T* src, std::size_t count, T* dst) {
#if defined(__AVX512F__)
  if constexpr (kCount % kWidth<T> == 0 &&
                (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    constexpr std::size_t W = kWidth<T>;
#pragma GCC unroll 16
    for (std::size_t l = 0; l < kCount; l += W) {
      const std::size_t n = count > l ? std::min(W, count - l) : 0;
      if constexpr (std::is_same_v<T, float>) {
        const __mmask16 mask = __mmask16((1u << n) - 1);
        _mm512_storeu_ps(dst + l, _mm512_maskz_loadu_ps(mask, src + l));
      } else {
        const __mmask8 mask = __mmask8((1u << n) - 1);
        _mm512_storeu_pd(dst + l, _mm512_maskz_loadu_pd(mask, src + l));
      }
    }
    return;
  }
#endif
  for (std::size_t l = 0; l < count; ++l) dst[l] = src[l];
  for (std::size_t l = count; l < kCount; ++l) dst[l] = T(0);
}

/// Splits `depth` contiguous runs of `width` values (run p at src + p * src_stride) across
/// ceil(width / kPanel) panels [depth, kPanel] placed kPanel * depth apart:
/// panel q gets dst_q[p][l] = src[p * src_stride + q * kPanel + l], zero past `width`.
/// Runs are read whole, one after the other, and the next few are prefetched: visiting one
/// panel at a time would instead walk down the source with stride src_stride, touching a
/// new cache line on every step (all in the same few cache sets when the stride is a power
/// of two), and the hardware prefetcher does not follow that.
template <std::size_t kPanel, class T>
void pack_runs_across_panels(const T* src, std::size_t src_stride, std::size_t width,
                             std::size_t depth, T* dst) {
  constexpr std::size_t kPrefetchAhead = 8;  // runs; measured, 4..16 are all similar
  constexpr std::size_t kLine = 64 / sizeof(T);
  const std::size_t full_panels = width / kPanel, tail = width % kPanel;
  for (std::size_t p = 0; p < depth; ++p) {
    const T* run = src + p * src_stride;
    if (p + kPrefetchAhead < depth) {
      const T* ahead = run + kPrefetchAhead * src_stride;
      for (std::size_t l = 0; l < width; l += kLine) __builtin_prefetch(ahead + l);
      __builtin_prefetch(ahead + width - 1);
    }
    T* out = dst + p * kPanel;
    for (std::size_t q = 0; q < full_panels; ++q, run += kPanel, out += kPanel * depth)
      copy_run<kPanel>(run, out);
    if (tail > 0) copy_run_padded<kPanel>(run, tail, out);
  }
}

/// Packs op(A)[rows, depth], whose (0, 0) element is `a`, into ceil(rows / MR) micro-panels
/// of MR rows, MR * depth values each, one after the other. Returns their layout.
template <class Tl, class T>
PanelLayout pack_a_block(bool trans_a, const T* a, std::size_t lda, std::size_t rows,
                         std::size_t depth, T* dst) {
  constexpr std::size_t MR = Tl::MR;
  if (trans_a) {
    // Column p of op(A) is row p of A: a contiguous run.
    pack_runs_across_panels<MR>(a, lda, rows, depth, dst);
    return PanelLayout{1, MR, depth};
  }
  for (std::size_t i = 0; i < rows; i += MR, dst += MR * depth)
    pack_rows<MR>(a + i * lda, lda, std::min(MR, rows - i), depth, dst);
  return PanelLayout{depth, 1, depth};
}

/// Packs op(B)[depth, cols], whose (0, 0) element is `b`, into ceil(cols / NR)
/// micro-panels [depth, NR], one after the other.
template <class Tl, class T>
void pack_b_block(bool trans_b, const T* b, std::size_t ldb, std::size_t depth, std::size_t cols,
                  T* dst) {
  constexpr std::size_t NR = Tl::NR;
  if (!trans_b) {
    // Row p of op(B) is a contiguous run of B.
    pack_runs_across_panels<NR>(b, ldb, cols, depth, dst);
    return;
  }
  for (std::size_t j = 0; j < cols; j += NR, dst += NR * depth)
    pack_lines_transposed<NR>(b + j * ldb, ldb, std::min(NR, cols - j), depth, dst);
}

// ---------------------------------------------------------------------------------------
// The macro-kernel: one packed A block against one packed B block.
// ---------------------------------------------------------------------------------------

/// C[rows, cols] = alpha * (A block [rows, depth], packed or in place as a_layout says)
///                 * (packed B block [depth, cols])
///                 + beta * C, then the epilogue (bias from column 0 of the block, ReLU) when
/// this is the last K slice; with beta == 0, C is not read.
/// Full MR x NR tiles are written in place; ragged edge tiles go through a small
/// temporary, so the microkernel always computes a whole tile from the zero-padded panels.
template <class Tl, class T>
void multiply_packed_blocks(std::size_t rows, std::size_t cols, std::size_t depth, T alpha,
                            const T* packed_a, PanelLayout a_layout, const T* packed_b, T beta,
                            T* c, std::size_t ldc, Epilogue<T> epilogue) {
  constexpr std::size_t MR = Tl::MR, NR = Tl::NR;
  alignas(64) T edge_tile[MR * NR];

  for (std::size_t j = 0; j < cols; j += NR) {
    const T* b_panel = packed_b + j * depth;
    const std::size_t tile_cols = std::min(NR, cols - j);
    const Epilogue<T> tile_epilogue{epilogue.bias ? epilogue.bias + j : nullptr, epilogue.relu};
    for (std::size_t i = 0; i < rows; i += MR) {
      const T* a_panel = packed_a + i * a_layout.panel_stride;
      const std::size_t tile_rows = std::min(MR, rows - i);
      T* c_tile = c + i * ldc + j;
      if (tile_rows == MR && tile_cols == NR) {
        microkernel<T, MR, Tl::kVectorsPerRow>(depth, a_panel, a_layout.row_stride,
                                               a_layout.depth_stride, b_panel, alpha, beta, c_tile,
                                               ldc, tile_epilogue);
      } else {
        microkernel<T, MR, Tl::kVectorsPerRow>(depth, a_panel, a_layout.row_stride,
                                               a_layout.depth_stride, b_panel, T(1), T(0),
                                               edge_tile, NR, Epilogue<T>{});
        for (std::size_t r = 0; r < tile_rows; ++r) {
          for (std::size_t s = 0; s < tile_cols; ++s) {
            T& out = c_tile[r * ldc + s];
            const T product = alpha * edge_tile[r * NR + s];
            T value = beta == T(0) ? product : product + beta * out;
            if (tile_epilogue.bias) value = value + tile_epilogue.bias[s];
            if (tile_epilogue.relu) value = value < T(0) ? T(0) : value;
            out = value;
          }
        }
      }
    }
  }
}

/// C[M, N] = beta * C, without reading C when beta == 0 (the K == 0 or alpha == 0 case),
/// then the epilogue.
template <class T>
void scale_c(std::size_t M, std::size_t N, T beta, T* C, std::size_t ldc, Epilogue<T> epilogue) {
  for (std::size_t i = 0; i < M; ++i) {
    T* row = C + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + N, T(0));
    } else if (beta != T(1)) {
      for (std::size_t j = 0; j < N; ++j) row[j] *= beta;
    }
    for (std::size_t j = 0; j < N; ++j) {
      if (epilogue.bias) row[j] = row[j] + epilogue.bias[j];
      if (epilogue.relu) row[j] = row[j] < T(0) ? T(0) : row[j];
    }
  }
}

// ---------------------------------------------------------------------------------------
// One product, on a team of threads.
// ---------------------------------------------------------------------------------------

/// One product C = alpha op(A) op(B) + beta C and its epilogue, as gemm's arguments say.
template <class T>
struct Product {
  bool trans_a, trans_b;
  std::size_t M, N, K;
  T alpha;
  const T* A;
  std::size_t lda;
  const T* B;
  std::size_t ldb;
  T beta;
  T* C;
  std::size_t ldc;
  Epilogue<T> epilogue;
};

/// Member `member` of a team of `size` computes its share of the product: it packs its share
/// of the micro-panels of each op(B) block into the block all share, waits for the others,
/// then multiplies its own rows of C (an even share of the MR-row panels, cut into blocks of
/// at most MC rows). With size > 1 every member of the team must call this.
template <class Tl, class T>
void product_share(const Product<T>& p, T* packed_b, std::size_t member, std::size_t size) {
  constexpr std::size_t MR = Tl::MR, NR = Tl::NR, panels_per_block = Tl::MC / MR;
  const Share mine = share_of((p.M + MR - 1) / MR, member, size);
  const std::size_t my_panels = mine.end - mine.first;
  const std::size_t blocks = (my_panels + panels_per_block - 1) / panels_per_block;
  T* packed_a =
      scratch<T>().a.reserve(std::min(my_panels, panels_per_block) * MR * std::min(Tl::KC, p.K));

  // [loop-nest]
  for (std::size_t j0 = 0; j0 < p.N; j0 += Tl::NC) {
    const std::size_t cols = std::min(Tl::NC, p.N - j0);
    for (std::size_t p0 = 0; p0 < p.K; p0 += Tl::KC) {
      const std::size_t depth = std::min(Tl::KC, p.K - p0);
      // The first K slice applies the caller's beta; later slices accumulate onto it, and the
      // last one finishes with the epilogue.
      const T slice_beta = p0 == 0 ? p.beta : T(1);
      const bool last_slice = p0 + depth == p.K;
      const Epilogue<T> epilogue{last_slice && p.epilogue.bias ? p.epilogue.bias + j0 : nullptr,
                                 last_slice && p.epilogue.relu};
      const Share b_panels = share_of((cols + NR - 1) / NR, member, size);
      if (b_panels.end > b_panels.first) {
        const std::size_t c0 = b_panels.first * NR, c1 = std::min(cols, b_panels.end * NR);
        const T* b_block = p.trans_b ? p.B + (j0 + c0) * p.ldb + p0 : p.B + p0 * p.ldb + j0 + c0;
        pack_b_block<Tl>(p.trans_b, b_block, p.ldb, depth, c1 - c0, packed_b + c0 * depth);
      }
      if (size > 1) {
#pragma omp barrier
      }
      for (std::size_t b = 0; b < blocks; ++b) {
        const Share block = share_of(my_panels, b, blocks);
        std::size_t i0 = (mine.first + block.first) * MR;
        std::size_t rows = std::min(p.M, (mine.first + block.end) * MR) - i0;
        const T* a_block = p.trans_a ? p.A + p0 * p.lda + i0 : p.A + i0 * p.lda + p0;
        if (cols <= NR) {
          // One B micro-panel (the head's 26 letters): each A micro-panel is read once, so
          // copying it first would only add to the work. Whole micro-panels are read where
          // A stores them (rows lda apart); the ragged last one is packed as usual, zero
          // padded, since its missing rows may lie past the end of A.
          const std::size_t whole = rows / MR * MR;
          const PanelLayout in_place =
              p.trans_a ? PanelLayout{1, p.lda, 1} : PanelLayout{p.lda, 1, p.lda};
          multiply_packed_blocks<Tl>(whole, cols, depth, p.alpha, a_block, in_place, packed_b,
                                     slice_beta, p.C + i0 * p.ldc + j0, p.ldc, epilogue);
          i0 += whole, rows -= whole, a_block += whole * in_place.panel_stride;
          if (rows == 0) continue;
        }
        const PanelLayout a_layout =
            pack_a_block<Tl>(p.trans_a, a_block, p.lda, rows, depth, packed_a);
        multiply_packed_blocks<Tl>(rows, cols, depth, p.alpha, packed_a, a_layout, packed_b,
                                   slice_beta, p.C + i0 * p.ldc + j0, p.ldc, epilogue);
      }
      if (size > 1) {  // nobody packs the next B block while another still reads this one
#pragma omp barrier
      }
    }
  }
  // [loop-nest]
}

/// The padded area of C that tiles of this shape compute for an M x N product.
template <class Tl>
constexpr std::size_t padded_area(std::size_t M, std::size_t N) {
  return round_up(M, Tl::MR) * round_up(N, Tl::NR);
}

template <class Tl, class T>
void run_product_with(const Product<T>& p, int threads) {
  T* packed_b =
      scratch<T>().b.reserve(round_up(std::min(Tl::NC, p.N), Tl::NR) * std::min(Tl::KC, p.K));
  if (threads <= 1) {
    product_share<Tl>(p, packed_b, 0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  product_share<Tl>(p, packed_b, std::size_t(team_member()), std::size_t(team_size()));
}

/// Computes one product on `threads` threads, with the tile that wastes the least of itself
/// on padding for this shape.
template <class T>
void run_product(const Product<T>& p, int threads) {
  if (p.M == 0 || p.N == 0) return;
  if (p.K == 0 || p.alpha == T(0)) {
    // As in BLAS, A and B are not read: the product is exactly zero.
    scale_c(p.M, p.N, p.beta, p.C, p.ldc, p.epilogue);
    return;
  }
  if (padded_area<NarrowTile<T>>(p.M, p.N) < padded_area<WideTile<T>>(p.M, p.N))
    run_product_with<NarrowTile<T>>(p, threads);
  else
    run_product_with<WideTile<T>>(p, threads);
}

// ---------------------------------------------------------------------------------------
// The fast gemm.
// ---------------------------------------------------------------------------------------

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
          const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  run_product(Product<T>{trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, {}}, 1);
}

// Below this many multiply-adds a product is not worth waking a second thread for (about the
// cost of starting an OpenMP team: a few microseconds).
constexpr double kThreadedWork = double(1 << 21);

template <class T>
void gemm_batched(const BatchedGemm<T>& g) {
  const auto product = [&g](std::size_t b) {
    return Product<T>{g.trans_a,
                      g.trans_b,
                      g.M,
                      g.N,
                      g.K,
                      T(1),
                      g.A + b * g.stride_a,
                      g.lda,
                      g.B + b * g.stride_b,
                      g.ldb,
                      T(0),
                      g.C + b * g.stride_c,
                      g.ldc,
                      Epilogue<T>{g.bias, g.relu}};
  };
  const int threads = threads_available();
  const double work = double(g.M) * double(g.N) * double(g.K);
  if (g.batch == 1) {
    // One large product (a Linear layer): its rows split between the threads.
    const bool split = threads > 1 && work >= kThreadedWork && g.M >= 2 * 16;
    run_product(product(0), split ? threads : 1);
    return;
  }
  // Many small ones (attention's, one per sequence and head): each on one thread.
  [[maybe_unused]] const bool parallel = threads > 1 && work >= 32.0 * 32 * 32;
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(g.batch);
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (std::ptrdiff_t b = 0; b < count; ++b) run_product(product(std::size_t(b)), 1);
}

}  // namespace

void fill_gemm(SimdPath& path) {
  path.f32.gemm = gemm<float>;
  path.f64.gemm = gemm<double>;
  path.f32.gemm_batched = gemm_batched<float>;
  path.f64.gemm_batched = gemm_batched<double>;
}

}  // namespace ag::kernels::AG_SIMD_NS
