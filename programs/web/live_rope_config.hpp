// Chapter 11's live figure: a model's config.json, pasted by the reader or one of the chapter's
// examples (chapters/11-todays-models/configs/, compiled into the module), read and explained
// by chapter 11's own read_hf_config_text and explain_hf_rope: for each kind of layer the
// wavelength of every plane, unscaled and scaled, its band and the attention factor, and which
// layers are of which kind.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

namespace pe::live {

/// One of chapter 11's example configs, as the module holds it.
struct ShippedConfig {
  std::string_view name;  ///< its file name in chapters/11-todays-models/configs/
  std::string_view text;  ///< the file's text
};

/// The chapter's example configs, in file-name order (none when the folder is empty). Written
/// into the build by programs/web/CMakeLists.txt from the folder's *.json.
const std::vector<ShippedConfig>& shipped_configs();

/// request {"config": a config.json's text,
///          "source": the name its errors begin with (an example's file name, or any text),
///          "seq_len": the length of the pass, a whole number >= 0 (dynamic and longrope
///                     depend on it; 0: at initialisation)}
/// -> explain_hf_rope(read_hf_config_text(config, source), seq_len) as it is, with
///    "source" and "pattern": [num_hidden_layers entries: the index in "layer_types" of each
///    layer's type]. A config the chapter refuses is its ag::Error, one line.
nlohmann::json rope_config(const nlohmann::json& request);

/// -> {"examples": [{"name", "text"} for each of shipped_configs()]}.
nlohmann::json rope_config_examples();

}  // namespace pe::live
