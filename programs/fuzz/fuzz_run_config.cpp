// libFuzzer target: the run-configuration reader and the checkpoint-metadata reader on
// arbitrary text. The input is read as the configuration JSON (config_from_json, which
// validates), and, when it is a JSON object, as the metadata of a checkpoint: its "config"
// object and its other values as the metadata strings (read_saved_progress, what
// Trainer::resume checks before it builds anything). Either is read or refused with an
// ag::Error; anything else (a crash, another exception, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ag/error.hpp"
#include "ag/random.hpp"
#include "lab/trainer.hpp"

namespace {

void read_as_metadata(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items())
    metadata[key] = value.is_string() ? value.get<std::string>() : value.dump();
  try {
    const pe::SavedProgress saved = pe::read_saved_progress(metadata, "fuzz input");
    (void)ag::Rng::from_state(saved.data_rng);
  } catch (const ag::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pe::TrainConfig config = pe::config_from_json(text);
    (void)pe::config_to_json(config);
  } catch (const ag::Error&) {
    // a clear refusal is the expected outcome for almost every input
  }
  read_as_metadata(text);
  return 0;
}
