#include <gtest/gtest.h>

#include <cmath>

#include "ag/gradcheck.hpp"
#include "ag/random.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/01-attention/tests/model_check.hpp"
#include "chapters/03-learned/learned.hpp"

using namespace pe;
using ag::Tensor;

// grades: task 3.1
TEST(Ch03Learned, TableIsATrainableParameterDrawnWithTheGivenSpread) {
  ag::Rng rng(5);
  LearnedEncoding enc(200, 16, rng, 0.02, ag::Dtype::f64);
  ASSERT_EQ(enc.table.shape(), (ag::Shape{200, 16}));
  EXPECT_EQ(enc.table.dtype(), ag::Dtype::f64);
  EXPECT_TRUE(enc.table.requires_grad()) << "an optimizer only updates what requires a gradient";
  const auto parameters = enc.named_parameters();
  ASSERT_EQ(parameters.size(), 1u);
  EXPECT_EQ(parameters[0].first, "table");
  // 3200 draws of N(0, 0.02^2): their standard deviation is 0.02 within a few percent
  const auto values = enc.table.to_vector();
  double sum = 0, squares = 0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  const double n = double(values.size()), mean = sum / n;
  EXPECT_NEAR(std::sqrt(squares / n - mean * mean), 0.02, 0.002) << "the stddev argument";
  EXPECT_NEAR(mean, 0.0, 0.002);
}

// grades: task 3.2
TEST(Ch03Learned, EmbedAddsTheRowsOfItsPositions) {
  // x + table[offset .. offset+T-1]: with x = 0, the rows themselves (the cache path too)
  ag::Rng rng(6);
  LearnedEncoding enc(10, 4, rng, 0.5, ag::Dtype::f64);
  for (std::int64_t offset : {0, 3, 7}) {
    const Tensor out = enc.embed(ag::zeros({2, 3, 4}, ag::Dtype::f64), offset);
    ASSERT_EQ(out.shape(), (ag::Shape{2, 3, 4}));
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t t = 0; t < 3; ++t)
        for (std::int64_t c = 0; c < 4; ++c)
          EXPECT_EQ(out.at({b, t, c}), enc.table.at({offset + t, c}))
              << "offset " << offset << ", batch " << b << ", position " << t;
  }
}

// grades: task 3.2
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

// grades: task 3.2
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

// grades: task 3.2
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

// grades: task 3.2
TEST(Ch03Learned, OneBlockModelPassesGradcheckInFloat64) {
  ag::Rng rng(9);
  const auto result = gradcheck_one_block(
      std::make_shared<LearnedEncoding>(10, small_decoder_config().width, rng), rng);
  EXPECT_TRUE(result.passed) << result.report;
  EXPECT_GT(result.checks, 100);
}

// grades: task 3.1
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
