// Chapter 11: Hugging Face's rope types against the published formulas (reference values that
// tests/hf_rope_reference.py computes in float64), each type's defining property, every
// refusal, and the rope types as options of chapter 5's "rope", through to a model that trains.
//
// transformers computes all of this in float32 tensors (torch.arange(...).float(), and
// llama3's wavelengths and band comparisons); the library and the reference compute in
// float64, so they agree to 1e-12 where transformers' own numbers agree to about 1e-7.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ag/error.hpp"
#include "ag/random.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/08-length/rope_scaling.hpp"
#include "chapters/08-length/tests/tiny_length_config.hpp"
#include "chapters/11-todays-models/hf_rope.hpp"
#include "chapters/11-todays-models/hf_rope_rule.hpp"
#include "chapters/11-todays-models/tests/hf_rope_reference_values.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/trainer.hpp"

using namespace pe;

namespace {

const std::vector<std::int64_t> kWidths = {8, 16, 64, 96, 128, 256};

// Llama 3.1's rope_scaling on a head of width D.
HfRopeParameters llama31(std::int64_t head_dim) {
  HfRopeParameters p;
  p.type = HfRopeType::llama3;
  p.rope_theta = 500000;
  p.head_dim = head_dim;
  p.factor = 8;
  p.low_freq_factor = 1;
  p.high_freq_factor = 4;
  p.original_max_position_embeddings = 8192;
  return p;
}

// Each got[i] within 1e-12 of want[i], relatively (a zero exactly).
void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12 * std::abs(want[i])) << what << ", plane " << i;
}

// A reference case's parameters, from the config's names that the script gives.
HfRopeParameters parameters_of(const hf_rope_reference::Case& c) {
  HfRopeParameters p;
  p.type = hf_rope_type_from(c.rope_type);
  for (const auto& [name, value] : c.fields) {
    const std::string key = name;
    if (key == "rope_theta")
      p.rope_theta = value;
    else if (key == "head_dim")
      p.head_dim = std::int64_t(value);
    else if (key == "partial_rotary_factor")
      p.partial_rotary_factor = value;
    else if (key == "max_position_embeddings")
      p.max_position_embeddings = std::int64_t(value);
    else if (key == "original_max_position_embeddings")
      p.original_max_position_embeddings = std::int64_t(value);
    else if (key == "factor")
      p.factor = value;
    else if (key == "attention_factor")
      p.attention_factor = value;
    else if (key == "beta_fast")
      p.beta_fast = value;
    else if (key == "beta_slow")
      p.beta_slow = value;
    else if (key == "mscale")
      p.mscale = value;
    else if (key == "mscale_all_dim")
      p.mscale_all_dim = value;
    else if (key == "truncate")
      p.truncate = value != 0;
    else if (key == "low_freq_factor")
      p.low_freq_factor = value;
    else if (key == "high_freq_factor")
      p.high_freq_factor = value;
    else
      ADD_FAILURE() << c.name << ": no field " << key;
  }
  p.short_factor = c.short_factor;
  p.long_factor = c.long_factor;
  return p;
}

// Every reference case of `type`: inv_freq and the attention factor, for every head width.
void expect_reference_cases(HfRopeType type) {
  int cases = 0;
  for (const hf_rope_reference::Case& c : hf_rope_reference::cases()) {
    if (hf_rope_type_from(c.rope_type) != type) continue;
    ++cases;
    const HfRopeFrequencies got = hf_rope_frequencies(parameters_of(c), c.seq_len);
    expect_close(got.inv_freq, c.inv_freq, c.name);
    EXPECT_NEAR(got.attention_factor, c.attention_factor, 1e-12 * c.attention_factor) << c.name;
    EXPECT_EQ(got.rotated_width, std::int64_t(2 * c.inv_freq.size())) << c.name;
  }
  EXPECT_GE(cases, int(kWidths.size())) << "reference cases of " << hf_rope_type_name(type);
}

// How many float32 values lie from a to b (both positive): their bit patterns' distance.
std::int64_t float_steps(float a, float b) {
  std::int32_t bits_a = 0, bits_b = 0;
  std::memcpy(&bits_a, &a, sizeof a);
  std::memcpy(&bits_b, &b, sizeof b);
  return std::abs(std::int64_t(bits_a) - std::int64_t(bits_b));
}

// The message of the ag::Error that `run` throws ("" and a failure when it throws none), which
// must be one line.
template <class F>
std::string error_of(F run) {
  try {
    run();
  } catch (const ag::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "accepted; expected an ag::Error";
  return "";
}

#define EXPECT_REFUSED(expression, words)                              \
  do {                                                                 \
    const std::string message = error_of([&] { (void)(expression); }); \
    EXPECT_NE(message.find(words), std::string::npos)                  \
        << "expected '" << (words) << "' in: " << message;             \
  } while (0)

}  // namespace

TEST(Ch11HfRope, TypeNamesAreTheConfigsOwn) {
  for (HfRopeType t :
       {HfRopeType::standard, HfRopeType::linear, HfRopeType::dynamic, HfRopeType::yarn,
        HfRopeType::longrope, HfRopeType::llama3, HfRopeType::proportional})
    EXPECT_EQ(hf_rope_type_from(hf_rope_type_name(t)), t);
  EXPECT_EQ(hf_rope_type_name(HfRopeType::standard), "default");
  EXPECT_REFUSED(hf_rope_type_from("ntk"), "unknown rope_type 'ntk' (expected default, linear");
}

TEST(Ch11HfRope, DefaultMatchesThePublishedFormulas) {
  expect_reference_cases(HfRopeType::standard);
}

TEST(Ch11HfRope, LinearMatchesThePublishedFormulas) { expect_reference_cases(HfRopeType::linear); }

TEST(Ch11HfRope, DynamicMatchesThePublishedFormulas) {
  expect_reference_cases(HfRopeType::dynamic);
}

TEST(Ch11HfRope, YarnMatchesThePublishedFormulas) { expect_reference_cases(HfRopeType::yarn); }

TEST(Ch11HfRope, LongropeMatchesThePublishedFormulas) {
  expect_reference_cases(HfRopeType::longrope);
}

// grades: task 11.1
TEST(Ch11HfRope, Llama3MatchesThePublishedFormulas) { expect_reference_cases(HfRopeType::llama3); }

// grades: task 11.2
TEST(Ch11HfRope, ProportionalMatchesThePublishedFormulas) {
  expect_reference_cases(HfRopeType::proportional);
}

TEST(Ch11HfRope, DefaultIsChapter5sRopeAndLinearDividesItByTheFactor) {
  for (std::int64_t D : kWidths) {
    HfRopeParameters p;
    p.head_dim = D;
    p.partial_rotary_factor = 0.5;
    const std::vector<double> theta = rope_frequencies(D / 2, 10000);
    EXPECT_EQ(hf_rope_frequencies(p).inv_freq, theta);
    p.type = HfRopeType::linear;
    p.factor = 16;
    const std::vector<double> linear = hf_rope_frequencies(p).inv_freq;
    for (std::size_t i = 0; i < theta.size(); ++i) EXPECT_EQ(linear[i], theta[i] / 16);
  }
}

TEST(Ch11HfRope, DynamicEqualsDefaultUpToMaxPositionEmbeddingsAndSlowsPastThem) {
  for (std::int64_t D : kWidths) {
    HfRopeParameters p;
    p.type = HfRopeType::dynamic;
    p.head_dim = D;
    p.factor = 8;
    p.max_position_embeddings = 4096;
    const std::vector<double> theta = rope_frequencies(D, 10000);
    for (std::int64_t seq_len : {0, 1, 2048, 4096}) {
      EXPECT_EQ(hf_rope_frequencies(p, seq_len).inv_freq, theta) << "D " << D << " T " << seq_len;
      EXPECT_EQ(hf_rope_scale(p, seq_len), 1);
    }
    const std::vector<double> longer = hf_rope_frequencies(p, 4097).inv_freq;
    EXPECT_EQ(longer[0], 1);  // theta_0 = 1 whatever the base
    for (std::size_t i = 1; i < theta.size(); ++i) EXPECT_LT(longer[i], theta[i]);
    EXPECT_DOUBLE_EQ(hf_rope_scale(p, 8192), 8.0 * 8192 / 4096 - 7);  // 9
  }
}

TEST(Ch11HfRope, YarnAttentionFactorFollowsMscaleAsTransformersReadsIt) {
  HfRopeParameters p;
  p.type = HfRopeType::yarn;
  p.head_dim = 64;
  p.factor = 40;
  p.original_max_position_embeddings = 4096;
  EXPECT_DOUBLE_EQ(hf_rope_attention_factor(p), 0.1 * std::log(40.0) + 1);
  p.mscale = 1;  // alone, it changes nothing: `if mscale and mscale_all_dim`
  EXPECT_DOUBLE_EQ(hf_rope_attention_factor(p), 0.1 * std::log(40.0) + 1);
  p.mscale_all_dim = 1;  // DeepSeek-V3: the ratio of two equal mscales
  EXPECT_EQ(hf_rope_attention_factor(p), 1);
  p.mscale = 0.707;
  EXPECT_DOUBLE_EQ(hf_rope_attention_factor(p),
                   (0.0707 * std::log(40.0) + 1) / (0.1 * std::log(40.0) + 1));
  p.mscale_all_dim = 0;  // 0 counts as absent
  EXPECT_DOUBLE_EQ(hf_rope_attention_factor(p), 0.1 * std::log(40.0) + 1);
  p.attention_factor = 0.5;  // given: used as it is
  EXPECT_EQ(hf_rope_attention_factor(p), 0.5);
  EXPECT_EQ(yarn_mscale(1), 1);
  EXPECT_EQ(yarn_mscale(0.5, 3), 1);
  // no factor: max_position_embeddings / original_max_position_embeddings
  HfRopeParameters implicit;
  implicit.type = HfRopeType::yarn;
  implicit.head_dim = 64;
  implicit.max_position_embeddings = 163840;
  implicit.original_max_position_embeddings = 4096;
  EXPECT_DOUBLE_EQ(hf_rope_scale(implicit), 40);
  EXPECT_DOUBLE_EQ(hf_rope_attention_factor(implicit), 0.1 * std::log(40.0) + 1);
  p = implicit;
  p.factor = 40;
  EXPECT_EQ(hf_rope_frequencies(implicit).inv_freq, hf_rope_frequencies(p).inv_freq);
}

TEST(Ch11HfRope, YarnIsChapter8sYarnUnderTheConfigsNames) {
  for (std::int64_t D : kWidths) {
    HfRopeParameters p;
    p.type = HfRopeType::yarn;
    p.head_dim = D;
    p.rope_theta = 500000;
    p.factor = 16;
    p.original_max_position_embeddings = 2048;
    p.beta_fast = 16;
    p.beta_slow = 2;
    p.truncate = false;
    RopeScalingOptions yarn;
    yarn.method = RopeScaling::yarn;
    yarn.scale = 16;
    yarn.train_length = 2048;
    yarn.alpha = 2;
    yarn.beta = 16;
    yarn.truncate = false;
    EXPECT_EQ(hf_rope_frequencies(p).inv_freq, scaled_rope_frequencies(D, 500000, yarn, 0));
    EXPECT_EQ(hf_rope_attention_factor(p), rope_attention_factor(yarn, 0));
  }
}

TEST(Ch11HfRope, LongropeUsesShortFactorsUpToTheOriginalLengthAndLongOnesPastIt) {
  for (std::int64_t D : kWidths) {
    HfRopeParameters p;
    p.type = HfRopeType::longrope;
    p.head_dim = D;
    p.max_position_embeddings = 131072;
    p.original_max_position_embeddings = 4096;
    for (std::int64_t i = 0; i < D / 2; ++i) {
      p.short_factor.push_back(1 + 0.01 * double(i));
      p.long_factor.push_back(1 + 2 * double(i));
    }
    const std::vector<double> theta = rope_frequencies(D, 10000);
    for (std::int64_t seq_len : {0, 1, 4096, 4097, 100000}) {
      const std::vector<double>& ext = seq_len > 4096 ? p.long_factor : p.short_factor;
      const std::vector<double> got = hf_rope_frequencies(p, seq_len).inv_freq;
      for (std::size_t i = 0; i < theta.size(); ++i)
        EXPECT_EQ(got[i], theta[i] / ext[i]) << "D " << D << " T " << seq_len << " plane " << i;
    }
  }
  // sqrt(1 + ln s / ln L0): Phi-3's s = 131072 / 4096 = 32 and L0 = 2^12 give sqrt(17 / 12)
  EXPECT_DOUBLE_EQ(longrope_attention_factor(32, 4096), std::sqrt(17.0 / 12));
  EXPECT_EQ(longrope_attention_factor(1, 4096), 1);
  EXPECT_EQ(longrope_attention_factor(0.5, 4096), 1);
}

// grades: task 11.1
TEST(Ch11HfRope, Llama3KeepsFastPlanesDividesSlowOnesAndBlendsBetween) {
  for (std::int64_t D : kWidths) {
    const HfRopeParameters p = llama31(D);
    const std::vector<double> theta = rope_frequencies(D, 500000);
    const std::vector<double> got = hf_rope_frequencies(p).inv_freq;
    ASSERT_EQ(got.size(), theta.size());
    std::map<std::string, int> bands;
    for (std::size_t i = 0; i < theta.size(); ++i) {
      const double wavelength = 2 * M_PI / theta[i];
      if (wavelength < 8192.0 / 4) {  // turns 4 times or more over L0: kept exactly
        EXPECT_EQ(got[i], theta[i]) << "D " << D << " plane " << i;
        ++bands["kept"];
      } else if (wavelength > 8192.0 / 1) {  // less than once: divided exactly
        EXPECT_EQ(got[i], theta[i] / 8) << "D " << D << " plane " << i;
        ++bands["divided"];
      } else {  // between: strictly between the two
        EXPECT_GT(got[i], theta[i] / 8) << "D " << D << " plane " << i;
        EXPECT_LT(got[i], theta[i]) << "D " << D << " plane " << i;
        ++bands["blended"];
      }
    }
    if (D >= 64) {  // wide heads have planes in every band
      EXPECT_EQ(bands.size(), 3u) << "D " << D;
    }
  }
  // by hand: lambda = L0 / 2 gives g = (2 - 1) / (4 - 1) = 1/3, so theta (2/3 / 8 + 1/3)
  const double theta = 2 * M_PI / 4096;
  EXPECT_NEAR(llama3_frequencies({theta}, 8, 1, 4, 8192)[0], theta * 5 / 12, 1e-15 * theta);
  // a slow plane divided, a fast one kept, with other factors
  EXPECT_EQ(llama3_frequencies({1e-6, 1.0}, 16, 2, 8, 512), (std::vector<double>{1e-6 / 16, 1.0}));
}

// grades: task 11.1
TEST(Ch11HfRope, Llama3WithEqualFactorsHasTwoBandsAndOneEdge) {
  // Llama 4 Scout: factor 16, high_freq_factor = low_freq_factor = 1, L0 = 8192: every plane
  // that turns at least once in L0 is kept, every slower one divided; none blended
  const std::vector<double> theta = rope_frequencies(128, 500000);
  const std::vector<double> got = llama3_frequencies(theta, 16, 1, 1, 8192);
  for (std::size_t i = 0; i < theta.size(); ++i)
    EXPECT_EQ(got[i], 2 * M_PI / theta[i] < 8192 ? theta[i] : theta[i] / 16) << "plane " << i;
  // a plane exactly on the edge would blend with weight 0 / 0: refused, not NaN
  EXPECT_THROW(llama3_frequencies({2 * M_PI / 8192}, 16, 1, 1, 8192), ag::Error);
}

// transformers computes in float32: Llama 3.1's 64 frequencies as torch gives them
// (tests/hf_rope_float32.py, run once) lie within 3.3e-7 of the float64 values, up to 3 steps
// of float32 from them rounded to float32; 21 of the 64 differ.
TEST(Ch11HfRope, Llama3InFloat32AsTransformersComputesIt) {
  const std::vector<double> torch_float32 = {1.0,
                                             0.8146172165870667,
                                             0.663601279258728,
                                             0.5405809879302979,
                                             0.44036662578582764,
                                             0.3587302267551422,
                                             0.2922278344631195,
                                             0.2380538135766983,
                                             0.193922758102417,
                                             0.1579728126525879,
                                             0.12868738174438477,
                                             0.10483095049858093,
                                             0.08539710193872452,
                                             0.06956595182418823,
                                             0.05666961893439293,
                                             0.046164050698280334,
                                             0.03760603070259094,
                                             0.030634520575404167,
                                             0.02495540864765644,
                                             0.020329104736447334,
                                             0.016560440883040428,
                                             0.013490419834852219,
                                             0.010989529080688953,
                                             0.008952259086072445,
                                             0.00729266507551074,
                                             0.005940730683505535,
                                             0.00483942124992609,
                                             0.003942275885492563,
                                             0.0032114461064338684,
                                             0.0021665706299245358,
                                             0.0013718936825171113,
                                             0.0008567514596506953,
                                             0.0005248460220173001,
                                             0.0003126936499029398,
                                             0.0001785077911335975,
                                             9.556212171446532e-05,
                                             7.784655463183299e-05,
                                             6.341514381347224e-05,
                                             5.165906986803748e-05,
                                             4.208236714475788e-05,
                                             3.428102354519069e-05,
                                             2.7925909307668917e-05,
                                             2.2748929040972143e-05,
                                             1.8531669411459006e-05,
                                             1.5096217794052791e-05,
                                             1.2297638932068367e-05,
                                             1.0017868589784484e-05,
                                             8.160727702488657e-06,
                                             6.647869668086059e-06,
                                             5.415469331637723e-06,
                                             4.411534519022098e-06,
                                             3.593711880967021e-06,
                                             2.927499735960737e-06,
                                             2.3847917418606812e-06,
                                             1.9426925064180978e-06,
                                             1.5825507944100536e-06,
                                             1.289173155782919e-06,
                                             1.050182618200779e-06,
                                             8.554969213037111e-07,
                                             6.969025321268418e-07,
                                             5.677088097399974e-07,
                                             4.6246537976912805e-07,
                                             3.76732259610435e-07,
                                             3.068925877869333e-07};
  const std::vector<double> got = hf_rope_frequencies(llama31(128)).inv_freq;
  ASSERT_EQ(got.size(), torch_float32.size());
  int differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(torch_float32[i], got[i], 3.3e-7 * got[i]) << "plane " << i;
    EXPECT_LE(float_steps(float(got[i]), float(torch_float32[i])), 3) << "plane " << i;
    differ += float(got[i]) != float(torch_float32[i]);
  }
  EXPECT_GT(differ, 0);  // float32 arithmetic is not float64's result rounded once
}

// grades: task 11.2
TEST(Ch11HfRope, ProportionalTurnsTheFirstKPlanesAtExponentsOverTheWholeHead) {
  // (D, p, k = floor(p D / 2)): fractions of a plane round down, 14.4 and 2.5 among them
  const std::vector<std::tuple<std::int64_t, double, std::int64_t>> cases = {
      {8, 0.25, 1},   {16, 0.3125, 2}, {64, 0.25, 8},   {96, 0.3, 14},
      {128, 0.5, 32}, {256, 0.25, 32}, {256, 1.0, 128}, {10, 0.5, 2}};
  for (const auto& [D, p, k] : cases) {
    const std::vector<double> got = proportional_frequencies(D, 10000, p);
    const std::vector<double> whole = rope_frequencies(D, 10000);  // base^(-2i / D)
    ASSERT_EQ(got.size(), std::size_t(D / 2)) << "D " << D << " p " << p;
    for (std::int64_t i = 0; i < D / 2; ++i)
      EXPECT_EQ(got[i], i < k ? whole[i] : 0.0) << "D " << D << " p " << p << " plane " << i;
  }
  // Gemma 4's global layers: p = 0.25 of a head of 512, so 64 planes turn and 192 stand still
  HfRopeParameters gemma;
  gemma.type = HfRopeType::proportional;
  gemma.head_dim = 512;
  gemma.rope_theta = 1e6;
  gemma.partial_rotary_factor = 0.25;
  const HfRopeFrequencies f = hf_rope_frequencies(gemma);
  EXPECT_EQ(f.rotated_width, 512);
  EXPECT_EQ(std::count(f.inv_freq.begin(), f.inv_freq.end(), 0.0), 192);
  EXPECT_EQ(f.inv_freq[63], std::pow(1e6, -126.0 / 512));
  gemma.factor = 8;  // every plane divided by the factor
  EXPECT_EQ(hf_rope_frequencies(gemma).inv_freq[63], std::pow(1e6, -126.0 / 512) / 8);
}

// grades: task 11.2
TEST(Ch11HfRope, ProportionalStillPlanesPassThroughTheRotationUnchanged) {
  const std::int64_t D = 16, T = 12;
  const std::vector<double> theta = proportional_frequencies(D, 10000, 0.375);  // k = 3
  const auto [cos, sin] = rope_tables(T, theta, ag::Dtype::f64);
  ag::Rng rng(11);
  const ag::Tensor x = ag::randn({1, 2, T, D}, rng, ag::Dtype::f64);
  for (RotaryLayout layout : {RotaryLayout::adjacent, RotaryLayout::half}) {
    const ag::Tensor y = apply_rotary(x, 0, cos, sin, layout);
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t m = 1; m < T; ++m)
        for (std::int64_t i = 0; i < D / 2; ++i) {
          // plane i's coordinates: (2i, 2i+1) adjacent, (i, i + D/2) half
          const std::int64_t a = layout == RotaryLayout::adjacent ? 2 * i : i;
          const std::int64_t b = layout == RotaryLayout::adjacent ? 2 * i + 1 : i + D / 2;
          if (i >= 3) {  // still: both coordinates as they were, bit for bit
            EXPECT_EQ(y.at({0, h, m, a}), x.at({0, h, m, a})) << "plane " << i << " m " << m;
            EXPECT_EQ(y.at({0, h, m, b}), x.at({0, h, m, b})) << "plane " << i << " m " << m;
          } else {  // turning
            EXPECT_NE(y.at({0, h, m, a}), x.at({0, h, m, a})) << "plane " << i << " m " << m;
          }
        }
  }
}

TEST(Ch11HfRope, EveryRefusalNamesItsField) {
  const auto refused = [](HfRopeParameters p, const std::string& words) {
    EXPECT_REFUSED(hf_rope_frequencies(p), words);
  };
  HfRopeParameters p = llama31(64);
  refused(
      [&] {
        auto q = p;
        q.factor.reset();
        return q;
      }(),
      "llama3: factor is missing");
  refused(
      [&] {
        auto q = p;
        q.factor = 0.5;
        return q;
      }(),
      "llama3: factor must be at least 1");
  refused(
      [&] {
        auto q = p;
        q.low_freq_factor.reset();
        return q;
      }(),
      "low_freq_factor is missing");
  refused(
      [&] {
        auto q = p;
        q.high_freq_factor.reset();
        return q;
      }(),
      "high_freq_factor is missing");
  refused(
      [&] {
        auto q = p;
        q.low_freq_factor = 4;
        q.high_freq_factor = 1;
        return q;
      }(),
      "llama3: high_freq_factor (1) must be at least low_freq_factor (4)");
  refused(
      [&] {
        auto q = p;
        q.low_freq_factor = 0;
        return q;
      }(),
      "low_freq_factor must be positive");
  refused(
      [&] {
        auto q = p;
        q.original_max_position_embeddings.reset();
        return q;
      }(),
      "llama3: original_max_position_embeddings is missing");
  refused(
      [&] {
        auto q = p;
        q.head_dim = 0;
        return q;
      }(),
      "head_dim must be at least 2");
  refused(
      [&] {
        auto q = p;
        q.rope_theta = 1;
        return q;
      }(),
      "rope_theta must be greater than 1");
  refused(
      [&] {
        auto q = p;
        q.partial_rotary_factor = 0;
        return q;
      }(),
      "partial_rotary_factor must lie in (0, 1]");
  refused(
      [&] {
        auto q = p;
        q.head_dim = 10;
        q.partial_rotary_factor = 0.3;
        return q;
      }(),
      "dim = int(head_dim * partial_rotary_factor) = int(10 * 0.3) = 3 must be even");

  HfRopeParameters linear;
  linear.type = HfRopeType::linear;
  linear.head_dim = 64;
  refused(linear, "linear: factor is missing");
  HfRopeParameters dynamic = linear;
  dynamic.type = HfRopeType::dynamic;
  dynamic.factor = 2;
  refused(dynamic, "dynamic: max_position_embeddings is missing");
  dynamic.max_position_embeddings = 64;
  dynamic.head_dim = 2;
  refused(dynamic, "dynamic: the rotated width must exceed 2");

  HfRopeParameters yarn;
  yarn.type = HfRopeType::yarn;
  yarn.head_dim = 64;
  yarn.original_max_position_embeddings = 4096;
  refused(yarn, "yarn: factor is missing (or max_position_embeddings");
  yarn.max_position_embeddings = 2048;
  refused(yarn, "yarn: factor = max_position_embeddings / original_max_position_embeddings");
  yarn.factor = 4;
  yarn.beta_fast = 2;
  yarn.beta_slow = 4;
  refused(yarn, "yarn: beta_fast (2) must exceed beta_slow (4)");
  yarn.beta_fast.reset();
  yarn.beta_slow = -1;
  refused(yarn, "yarn: beta_slow must be positive");
  yarn.beta_slow.reset();
  yarn.attention_factor = 0;
  refused(yarn, "yarn: attention_factor must be positive");

  HfRopeParameters longrope;
  longrope.type = HfRopeType::longrope;
  longrope.head_dim = 64;
  longrope.factor = 4;
  longrope.original_max_position_embeddings = 4096;
  longrope.long_factor.assign(32, 2.0);
  refused(longrope, "longrope: short_factor is missing");
  longrope.short_factor.assign(31, 1.0);
  refused(longrope, "longrope: short_factor must have dim / 2 = 32 entries, one per plane, got 31");
  longrope.short_factor.assign(32, 1.0);
  longrope.long_factor[3] = -2;
  refused(longrope, "longrope: long_factor[3] must be positive");
  longrope.long_factor[3] = 2;
  longrope.factor.reset();
  refused(longrope, "longrope: factor is missing");

  HfRopeParameters proportional;
  proportional.type = HfRopeType::proportional;
  proportional.head_dim = 10;
  proportional.partial_rotary_factor = 0.5;
  EXPECT_NO_THROW(hf_rope_frequencies(proportional));  // 10 * 0.5 = 5 coordinates: 2 planes
  proportional.head_dim = 9;
  refused(proportional, "proportional: head_dim must be even");
  EXPECT_REFUSED(proportional_frequencies(8, 10000, 1.5), "partial_rotary_factor must lie in");
  EXPECT_REFUSED(llama3_frequencies({1.0}, 8, 4, 1, 8192),
                 "llama3: high_freq_factor (1) must be at least low_freq_factor (4)");
  EXPECT_REFUSED(hf_rope_frequencies(llama31(64), -1), "seq_len must not be negative");
  EXPECT_REFUSED(longrope_attention_factor(2, 1), "original_max_position_embeddings");
}

namespace {

class Ch11HfRopeOption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_chapter_encodings(); }

  // "rope" with these options on heads of width D = 32 (width 64, 2 heads)
  static std::shared_ptr<RotaryEncoding> rope(const std::map<std::string, std::string>& options) {
    EncodingSpec spec;
    spec.model.width = 64;
    spec.model.heads = 2;
    spec.options = options;
    ag::Rng rng(3);
    return std::dynamic_pointer_cast<RotaryEncoding>(make_encoding("rope", spec, rng));
  }

  static std::vector<double> inspected(const RotaryEncoding& rope, const std::string& name,
                                       std::int64_t length) {
    for (const auto& [key, value] : rope.inspect(length))
      if (key == name) return value.to_vector();
    ADD_FAILURE() << "inspect shows no " << name;
    return {};
  }
};

}  // namespace

TEST_F(Ch11HfRopeOption, RuleThroughTheRegistryGivesHfRopeFrequencies) {
  // the command of the chapter: pe train --encoding rope -o rope_type=llama3 -o factor=16 ...
  auto llama3 = rope({{"rope_type", "llama3"},
                      {"factor", "16"},
                      {"original_max_position_embeddings", "32"},
                      {"low_freq_factor", "1"},
                      {"high_freq_factor", "4"}});
  ASSERT_TRUE(llama3);
  const auto* rule = dynamic_cast<const HfRope*>(llama3->options().rule.get());
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->parameters().type, HfRopeType::llama3);
  HfRopeParameters p;
  p.type = HfRopeType::llama3;
  p.head_dim = 32;
  p.factor = 16;
  p.original_max_position_embeddings = 32;
  p.low_freq_factor = 1;
  p.high_freq_factor = 4;
  EXPECT_EQ(inspected(*llama3, "frequencies", 64), hf_rope_frequencies(p).inv_freq);
  EXPECT_EQ(inspected(*llama3, "scale", 64), std::vector<double>{16});

  // rope's own fraction is the rotated part: dim = 16 of 32
  auto half = rope({{"rope_type", "llama3"},
                    {"factor", "16"},
                    {"original_max_position_embeddings", "32"},
                    {"low_freq_factor", "1"},
                    {"high_freq_factor", "4"},
                    {"fraction", "0.5"},
                    {"base", "500000"}});
  p.head_dim = 16;
  p.rope_theta = 500000;
  EXPECT_EQ(inspected(*half, "frequencies", 64), hf_rope_frequencies(p).inv_freq);

  // yarn: its attention factor reaches RoPE
  auto yarn = rope({{"rope_type", "yarn"},
                    {"factor", "40"},
                    {"original_max_position_embeddings", "16"},
                    {"mscale", "0.707"},
                    {"mscale_all_dim", "1"},
                    {"truncate", "false"}});
  HfRopeParameters y;
  y.type = HfRopeType::yarn;
  y.head_dim = 32;
  y.factor = 40;
  y.original_max_position_embeddings = 16;
  y.mscale = 0.707;
  y.mscale_all_dim = 1;
  y.truncate = false;
  EXPECT_EQ(inspected(*yarn, "frequencies", 64), hf_rope_frequencies(y).inv_freq);
  EXPECT_EQ(inspected(*yarn, "attention_factor", 64),
            std::vector<double>{hf_rope_frequencies(y).attention_factor});

  // longrope: the lists as comma-separated numbers, short up to L0 = 16 and long past it
  std::string short_factor, long_factor;
  HfRopeParameters l;
  l.type = HfRopeType::longrope;
  l.head_dim = 32;
  l.original_max_position_embeddings = 16;
  l.max_position_embeddings = 64;
  for (int i = 0; i < 16; ++i) {
    short_factor += (i ? "," : "") + std::to_string(1 + i);
    long_factor += (i ? "," : "") + std::to_string(2 + 3 * i);
    l.short_factor.push_back(1 + i);
    l.long_factor.push_back(2 + 3 * i);
  }
  auto longrope = rope({{"rope_type", "longrope"},
                        {"short_factor", short_factor},
                        {"long_factor", long_factor},
                        {"original_max_position_embeddings", "16"},
                        {"max_position_embeddings", "64"}});
  EXPECT_EQ(inspected(*longrope, "frequencies", 16), hf_rope_frequencies(l, 16).inv_freq);
  EXPECT_EQ(inspected(*longrope, "frequencies", 17), hf_rope_frequencies(l, 17).inv_freq);
  EXPECT_DOUBLE_EQ(inspected(*longrope, "attention_factor", 17)[0],
                   std::sqrt(1 + std::log(4.0) / std::log(16.0)));

  // proportional: planes over the whole head, the tail still
  auto proportional = rope({{"rope_type", "proportional"}, {"partial_rotary_factor", "0.25"}});
  EXPECT_EQ(inspected(*proportional, "frequencies", 8), proportional_frequencies(32, 10000, 0.25));

  // dynamic: max_position_embeddings is its L
  auto dynamic =
      rope({{"rope_type", "dynamic"}, {"factor", "2"}, {"max_position_embeddings", "16"}});
  EXPECT_EQ(inspected(*dynamic, "frequencies", 16), rope_frequencies(32, 10000));
  EXPECT_EQ(inspected(*dynamic, "scale", 32), std::vector<double>{3});

  // default is RoPE as trained: no rule
  EXPECT_FALSE(rope({{"rope_type", "default"}})->options().rule);
}

TEST_F(Ch11HfRopeOption, BadOptionsAreRefusedInOneLine) {
  const std::map<std::string, std::string> llama3 = {{"rope_type", "llama3"},
                                                     {"factor", "16"},
                                                     {"original_max_position_embeddings", "32"},
                                                     {"low_freq_factor", "1"},
                                                     {"high_freq_factor", "4"}};
  const auto with = [&](std::map<std::string, std::string> changes) {
    std::map<std::string, std::string> options = llama3;
    for (const auto& [key, value] : changes) options[key] = value;
    return options;
  };
  EXPECT_REFUSED(rope({{"factor", "2"}}), "rope: option factor needs rope_type=TYPE");
  EXPECT_REFUSED(rope({{"rope_type", "ntk"}}), "unknown rope_type 'ntk'");
  EXPECT_REFUSED(rope(with({{"beta_fast", "2"}})),
                 "rope: option beta_fast does nothing with rope_type=llama3 (it takes factor, "
                 "original_max_position_embeddings, max_position_embeddings, low_freq_factor, "
                 "high_freq_factor)");
  EXPECT_REFUSED(rope({{"rope_type", "default"}, {"factor", "2"}}),
                 "option factor does nothing with rope_type=default (it takes none)");
  EXPECT_REFUSED(rope(with({{"partial_rotary_factor", "0.5"}})),
                 "partial_rotary_factor is rope_type=proportional's p; with rope_type=llama3 the "
                 "rotated fraction is rope's own option fraction");
  EXPECT_REFUSED(
      rope({{"rope_type", "proportional"}, {"partial_rotary_factor", "0.25"}, {"fraction", "0.5"}}),
      "it needs fraction=1");
  EXPECT_REFUSED(rope({{"rope_type", "proportional"}, {"partial_rotary_factor", "0"}}),
                 "proportional: partial_rotary_factor must lie in (0, 1], got 0");
  EXPECT_REFUSED(rope({{"rope_type", "linear"}}), "linear: factor is missing");
  EXPECT_REFUSED(rope({{"rope_type", "linear"}, {"factor", "0.5"}}),
                 "linear: factor must be at least 1, got 0.5");
  EXPECT_REFUSED(rope({{"rope_type", "linear"}, {"factor", "two"}}),
                 "rope: option factor must be a finite number, got 'two'");
  EXPECT_REFUSED(rope(with({{"low_freq_factor", "4"}, {"high_freq_factor", "1"}})),
                 "llama3: high_freq_factor (1) must be at least low_freq_factor (4)");
  EXPECT_REFUSED(rope(with({{"original_max_position_embeddings", "32.5"}})),
                 "option original_max_position_embeddings must be a whole number");
  EXPECT_REFUSED(rope({{"rope_type", "yarn"},
                       {"factor", "4"},
                       {"original_max_position_embeddings", "16"},
                       {"truncate", "maybe"}}),
                 "option truncate must be true, false, 1 or 0");
  EXPECT_REFUSED(rope({{"rope_type", "longrope"},
                       {"short_factor", "1,x"},
                       {"long_factor", "1,2"},
                       {"factor", "2"},
                       {"original_max_position_embeddings", "16"}}),
                 "option short_factor must be finite numbers separated by commas, got 'x' in "
                 "'1,x'");
  EXPECT_REFUSED(rope({{"rope_type", "longrope"},
                       {"short_factor", "1,2"},
                       {"long_factor", "1,2"},
                       {"factor", "2"},
                       {"original_max_position_embeddings", "16"}}),
                 "longrope: short_factor must have dim / 2 = 16 entries, one per plane, got 2");
  EXPECT_REFUSED(rope({{"rope_type", "dynamic"},
                       {"factor", "2"},
                       {"max_position_embeddings", "16"},
                       {"fraction", "0.0625"}}),
                 "dynamic: the rotated width must exceed 2");
  // two chapters' rules at once
  EXPECT_REFUSED(rope(with({{"scaling", "yarn"}, {"scale", "4"}, {"train_length", "32"}})),
                 "rope: scaling=yarn (chapter 8) and rope_type=llama3 (chapter 11) cannot both "
                 "be given");
  EXPECT_REFUSED(rope(with({{"scale", "4"}})),
                 "rope: scale=4 (chapter 8) and rope_type=llama3 (chapter 11) cannot both be "
                 "given");
  // truncate, which both chapters take, goes with the rule the other options choose
  EXPECT_REFUSED(rope({{"truncate", "false"}}), "truncate");
  auto hf = rope({{"rope_type", "yarn"},
                  {"factor", "4"},
                  {"original_max_position_embeddings", "16"},
                  {"truncate", "false"}});
  EXPECT_FALSE(dynamic_cast<const HfRope&>(*hf->options().rule).parameters().truncate);
  auto ch08 =
      rope({{"scaling", "yarn"}, {"scale", "4"}, {"train_length", "16"}, {"truncate", "0"}});
  EXPECT_FALSE(rope_scaling_of(ch08->options()).truncate);
}

TEST_F(Ch11HfRopeOption, AModelWithLlama3TrainsAFewSteps) {
  TrainConfig c = tiny_length_config("rope");
  c.encoding_options = {{"rope_type", "llama3"},
                        {"factor", "16"},
                        {"original_max_position_embeddings", "32"},
                        {"low_freq_factor", "1"},
                        {"high_freq_factor", "4"}};
  Trainer trainer(c);
  trainer.train();
  ASSERT_FALSE(trainer.history().empty());
  for (const HistoryPoint& point : trainer.history()) {
    EXPECT_TRUE(std::isfinite(point.train_loss));
    EXPECT_TRUE(std::isfinite(point.eval_loss));
  }
}
