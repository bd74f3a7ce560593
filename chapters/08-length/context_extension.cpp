#include "chapters/08-length/context_extension.hpp"

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
  if (method == "yarn" || method == "yarn-paper")
    return {{"scaling", method}, {"scale", s}, {"train_length", L}};
  throw ag::Error("rope_scaling_encoding_options: unknown method '" + method +
                  "' (none, linear, ntk, dynamic, yarn, yarn-paper)");
}

std::unique_ptr<Trainer> trainer_from_checkpoint(const TrainConfig& config,
                                                 const std::string& checkpoint) {
  auto trainer = std::make_unique<Trainer>(config);
  trainer->load_weights(checkpoint);
  return trainer;
}

}  // namespace pe
