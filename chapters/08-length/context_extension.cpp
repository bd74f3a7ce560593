#include "context_extension.hpp"

#include <cstdio>

#include "ag/error.hpp"

namespace pe {

std::map<std::string, std::string> rope_scaling_encoding_options(const std::string& method,
                                                                  double scale,
                                                                  std::int64_t train_length) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", scale);
  const std::string L = std::to_string(train_length);
  if (method == "none") return {};
  if (method == "linear" || method == "ntk") return {{"scaling", method}, {"scale", s}};
  if (method == "dynamic") return {{"scaling", method}, {"train_length", L}};
  if (method == "yarn") return {{"scaling", method}, {"scale", s}, {"train_length", L}};
  throw ag::Error("rope_scaling_encoding_options: unknown method '" + method +
                  "' (none, linear, ntk, dynamic, yarn)");
}

std::unique_ptr<Trainer> trainer_with_weights(const TrainConfig& config, const Decoder& trained) {
  auto trainer = std::make_unique<Trainer>(config);
  const auto to = trainer->model().named_parameters();
  const auto from = trained.named_parameters();
  ag::check(to.size() == from.size(), "trainer_with_weights", "the new model has ", to.size(),
            " parameters, the trained one ", from.size());
  for (std::size_t i = 0; i < to.size(); ++i) {
    ag::check(to[i].first == from[i].first && to[i].second.shape() == from[i].second.shape(),
              "trainer_with_weights", "parameter ", i, " is '", to[i].first, "' ",
              ag::shape_string(to[i].second.shape()), " in the new model but '", from[i].first,
              "' ", ag::shape_string(from[i].second.shape()), " in the trained one");
    ag::Tensor target = to[i].second;
    target.copy_from(from[i].second);
  }
  return trainer;
}

}  // namespace pe
