// Chapter 11's sidebar: M-RoPE, Qwen2-VL's multimodal RoPE. Text tokens turn exactly as plain
// RoPE; the planes split where mrope_section says, as transformers splits them; a score
// between two image patches depends only on their (dt, dh, dw); the positions follow
// get_rope_index's own example.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chapters/05-rope/rope.hpp"
#include "chapters/11-todays-models/mrope.hpp"

using namespace pe;
using ag::Tensor;

namespace {

constexpr auto f64 = ag::Dtype::f64;
// Qwen2-VL's text model: head_dim 128, rope_theta 1e6, mrope_section [16, 24, 24]
const std::vector<std::int64_t> kQwen2VlSection{16, 24, 24};
constexpr std::int64_t kQwen2VlHead = 128;
constexpr double kQwen2VlBase = 1e6;

// The score q . k of one query at position pq and one key at pk, both turned by M-RoPE
// (rotate-half layout, as Qwen2-VL), for a head of width D.
double score(const Tensor& q, const Tensor& k, MropePosition pq, MropePosition pk,
             const std::vector<double>& theta, const std::vector<std::int64_t>& section) {
  const auto [cos_q, sin_q] = mrope_tables({pq}, theta, section, f64);
  const auto [cos_k, sin_k] = mrope_tables({pk}, theta, section, f64);
  const Tensor q_turned = apply_rotary(q, 0, cos_q, sin_q, RotaryLayout::half);
  const Tensor k_turned = apply_rotary(k, 0, cos_k, sin_k, RotaryLayout::half);
  return ag::sum(ag::mul(q_turned, k_turned)).item();
}

}  // namespace

TEST(Ch11Mrope, TextTokensTurnExactlyAsPlainRope) {
  // t = h = w = p: every section reads p, so the tables are chapter 5's, bit for bit
  std::vector<MropePosition> text;
  append_mrope_text(text, 50);
  const std::vector<double> theta = rope_frequencies(kQwen2VlHead, kQwen2VlBase);
  const auto [cos, sin] = mrope_tables(text, theta, kQwen2VlSection, f64);
  const auto [rope_cos, rope_sin] = rope_tables(50, kQwen2VlHead, kQwen2VlBase, f64);
  EXPECT_EQ(cos.to_vector(), rope_cos.to_vector());
  EXPECT_EQ(sin.to_vector(), rope_sin.to_vector());
}

TEST(Ch11Mrope, SectionsSplitThePlanesWhereTransformersSplitsThem) {
  // transformers doubles mrope_section to [16, 24, 24, 16, 24, 24], splits the 128 columns of
  // cat(freqs, freqs) into those chunks and gives chunk i the coordinate i % 3: column j and
  // column j + 64 are the two halves of plane j, and they must take the same coordinate.
  const std::vector<int> axes = mrope_plane_axes(kQwen2VlSection);
  ASSERT_EQ(axes.size(), 64u);
  std::vector<std::int64_t> chunks = kQwen2VlSection;
  chunks.insert(chunks.end(), kQwen2VlSection.begin(), kQwen2VlSection.end());
  std::int64_t column = 0;
  for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk)
    for (std::int64_t j = 0; j < chunks[chunk]; ++j, ++column)
      EXPECT_EQ(axes[static_cast<std::size_t>(column % 64)], int(chunk % 3)) << column;
  EXPECT_EQ(column, kQwen2VlHead);
  // One coordinate at a time: t turns planes 0 .. 15, h planes 16 .. 39, w planes 40 .. 63.
  const std::vector<double> theta = rope_frequencies(kQwen2VlHead, kQwen2VlBase);
  const std::vector<MropePosition> probes{{5, 0, 0}, {0, 5, 0}, {0, 0, 5}};
  const auto [cos, sin] = mrope_tables(probes, theta, kQwen2VlSection, f64);
  const std::int64_t first[3] = {0, 16, 40}, end[3] = {16, 40, 64};
  for (std::int64_t n = 0; n < 3; ++n)
    for (std::int64_t i = 0; i < 64; ++i) {
      const bool turns = i >= first[n] && i < end[n];
      EXPECT_EQ(sin.at({n, i}) != 0, turns) << "coordinate " << n << ", plane " << i;
      if (turns) {
        EXPECT_DOUBLE_EQ(sin.at({n, i}), std::sin(5 * theta[i]));
      }
    }
}

TEST(Ch11Mrope, PatchScoresDependOnlyOnTheirOffsets) {
  // Two patches at (t, h, w) and (t', h', w'): moving both by the same vector leaves the score
  // as it was; changing one offset alone changes it.
  const std::int64_t D = 16;
  const std::vector<std::int64_t> section{2, 3, 3};
  const std::vector<double> theta = rope_frequencies(D, 10000);
  ag::Rng rng(1);
  const Tensor q = ag::randn({1, 1, 1, D}, rng, f64), k = ag::randn({1, 1, 1, D}, rng, f64);
  const MropePosition pq{3, 1, 4}, pk{3, 5, 9};
  const double at_rest = score(q, k, pq, pk, theta, section);
  for (const MropePosition s : {MropePosition{1, 0, 0}, {0, 2, 0}, {0, 0, 7}, {4, 9, 2}}) {
    const MropePosition moved_q{pq.t + s.t, pq.h + s.h, pq.w + s.w};
    const MropePosition moved_k{pk.t + s.t, pk.h + s.h, pk.w + s.w};
    EXPECT_NEAR(score(q, k, moved_q, moved_k, theta, section), at_rest, 1e-12)
        << s.t << ", " << s.h << ", " << s.w;
  }
  for (const MropePosition other : {MropePosition{4, 5, 9}, {3, 6, 9}, {3, 5, 10}})
    EXPECT_GT(std::fabs(score(q, k, pq, other, theta, section) - at_rest), 1e-6)
        << other.t << ", " << other.h << ", " << other.w;
}

TEST(Ch11Mrope, PositionsFollowGetRopeIndex) {
  // get_rope_index's own example: a video of 3 x 2 x 2 patches, then 5 text tokens, which
  // start one past the largest vision position.
  std::vector<MropePosition> positions;
  append_mrope_grid(positions, 3, 2, 2);
  append_mrope_text(positions, 5);
  ASSERT_EQ(positions.size(), 17u);
  const std::vector<std::int64_t> t{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5, 6, 7};
  const std::vector<std::int64_t> h{0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 3, 4, 5, 6, 7};
  const std::vector<std::int64_t> w{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 3, 4, 5, 6, 7};
  for (std::size_t n = 0; n < positions.size(); ++n) {
    EXPECT_EQ(positions[n].t, t[n]) << n;
    EXPECT_EQ(positions[n].h, h[n]) << n;
    EXPECT_EQ(positions[n].w, w[n]) << n;
  }
  // text first: an image of 1 x 2 x 2 after two tokens starts at 2 on every axis
  std::vector<MropePosition> after_text;
  append_mrope_text(after_text, 2);
  append_mrope_grid(after_text, 1, 2, 2);
  append_mrope_text(after_text, 1);
  EXPECT_EQ(after_text[2].t, 2);
  EXPECT_EQ(after_text[5].h, 3);
  EXPECT_EQ(after_text[5].w, 3);
  EXPECT_EQ(after_text[6].t, 4);  // the next text token: one past 3
}

TEST(Ch11Mrope, BadSectionsAreRefused) {
  const std::vector<double> theta = rope_frequencies(16, 10000);
  EXPECT_THROW(mrope_plane_axes({16, 24}), ag::Error);
  EXPECT_THROW(mrope_plane_axes({4, -1, 5}), ag::Error);
  EXPECT_THROW(mrope_plane_axes({0, 0, 0}), ag::Error);
  EXPECT_THROW(mrope_tables({{1, 1, 1}}, theta, {2, 3, 4}, f64), ag::Error);  // 9 planes, 8
  EXPECT_NO_THROW(mrope_tables({{1, 1, 1}}, theta, {2, 3, 3}, f64));
  std::vector<MropePosition> positions;
  EXPECT_THROW(append_mrope_grid(positions, 1, 0, 2), ag::Error);
  EXPECT_THROW(append_mrope_text(positions, -1), ag::Error);
}
