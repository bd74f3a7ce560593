#include "programs/web/live_rope_config.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/error.hpp"
#include "chapters/11-todays-models/hf_config.hpp"

namespace pe::live {

nlohmann::json rope_config(const nlohmann::json& request) {
  for (const auto& [key, value] : request.items())
    ag::check(key == "config" || key == "source" || key == "seq_len", "rope_config",
              "unknown key '", key, "'");
  const nlohmann::json& seq_len = request.at("seq_len");
  ag::check(seq_len.is_number_integer() && seq_len.get<std::int64_t>() >= 0, "rope_config",
            "the sequence length must be a whole number >= 0 (0: at initialisation), got ",
            seq_len.dump());
  const HfModelRope model = read_hf_config_text(request.at("config").get<std::string>(),
                                                request.at("source").get<std::string>());
  nlohmann::json answer = explain_hf_rope(model, seq_len.get<std::int64_t>());
  // Which kind each layer is, layer by layer: the strip the page draws under the planes.
  std::vector<std::int64_t> pattern(static_cast<std::size_t>(model.layers), -1);
  for (std::size_t t = 0; t < model.types.size(); ++t)
    for (std::int64_t layer : model.types[t].layers)
      if (layer >= 0 && layer < model.layers)
        pattern[static_cast<std::size_t>(layer)] = static_cast<std::int64_t>(t);
  answer["source"] = request.at("source");
  answer["pattern"] = pattern;
  return answer;
}

nlohmann::json rope_config_examples() {
  nlohmann::json examples = nlohmann::json::array();
  for (const ShippedConfig& config : shipped_configs())
    examples.push_back({{"name", std::string(config.name)}, {"text", std::string(config.text)}});
  return {{"examples", examples}};
}

}  // namespace pe::live
