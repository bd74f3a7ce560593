#include <gtest/gtest.h>

#include "model_check.hpp"

#include "ag/gradcheck.hpp"
#include "ag/random.hpp"
#include "decoder.hpp"
#include "encoding_registry.hpp"
#include "learned.hpp"

using namespace pe;
using ag::Tensor;

TEST(Ch03Learned, PastMaxLenIsAnErrorNamingBothNumbers) {
  ag::Rng rng(1);
  LearnedEncoding enc(12, 4, rng);
  try {
    enc.embed(ag::zeros({1, 13, 4}), 0);
    FAIL() << "no error";
  } catch (const ag::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("13"), std::string::npos) << what;
    EXPECT_NE(what.find("12"), std::string::npos) << what;
  }
  EXPECT_THROW(enc.embed(ag::zeros({1, 3, 4}), 10), ag::Error);  // the cache path
  EXPECT_NO_THROW(enc.embed(ag::zeros({1, 3, 4}), 9));
}

TEST(Ch03Learned, GradientsReachOnlyTheRowsUsed) {
  ag::Rng rng(2);
  LearnedEncoding enc(12, 4, rng, 0.02, ag::Dtype::f64);
  const Tensor x = ag::randn({2, 5, 4}, rng, ag::Dtype::f64);
  ag::sum(ag::mul(enc.embed(x, 0), enc.embed(x, 0))).backward();
  const Tensor g = enc.table.grad();
  for (std::int64_t r = 0; r < 12; ++r) {
    double norm = 0;
    for (std::int64_t j = 0; j < 4; ++j) norm += std::abs(g.at({r, j}));
    if (r < 5)
      EXPECT_GT(norm, 0) << r;
    else
      EXPECT_EQ(norm, 0) << r;
  }
}

TEST(Ch03Learned, EncodingPassesGradcheck) {
  ag::Rng rng(3);
  LearnedEncoding enc(8, 4, rng, 0.5, ag::Dtype::f64);
  Tensor x = ag::randn({2, 3, 4}, rng, ag::Dtype::f64);
  const auto result = ag::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return ag::mul(enc.embed(in[0], 2), enc.embed(in[0], 2));
      },
      {x, enc.table});
  EXPECT_TRUE(result.passed) << result.report;
}

TEST(Ch03Learned, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(9);
  const auto result = gradcheck_one_block(
      std::make_shared<LearnedEncoding>(10, small_decoder_config().width, rng), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

TEST(Ch03Learned, RegisteredWithItsOptions) {
  register_ch03_encodings();
  ag::Rng rng(4);
  EncodingSpec spec;
  spec.model.width = 8;
  spec.max_length = 20;
  auto enc = std::dynamic_pointer_cast<LearnedEncoding>(make_encoding("learned", spec, rng));
  ASSERT_TRUE(enc);
  EXPECT_EQ(enc->max_len(), 20);
  EXPECT_EQ(enc->parameters().size(), 1u);
  spec.options = {{"max_len", "7"}};
  enc = std::dynamic_pointer_cast<LearnedEncoding>(make_encoding("learned", spec, rng));
  EXPECT_EQ(enc->max_len(), 7);
  EXPECT_THROW(enc->inspect(8), ag::Error);
  for (std::map<std::string, std::string> o : std::vector<std::map<std::string, std::string>>{
           {{"max_len", "x"}}, {{"max_len", "0"}}, {{"colour", "red"}}}) {
    spec.options = o;
    EXPECT_THROW(make_encoding("learned", spec, rng), ag::Error);
  }
}
