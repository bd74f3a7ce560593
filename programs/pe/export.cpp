// `pe export`: a trained model as a safetensors file (ag/safetensors.hpp) that another framework
// can load, with what it needs to rebuild the model and to check that it did: every parameter
// under its checkpoint name, the model's configuration, a batch of token ids and the logits
// that this build's forward pass gives for them (appendix D recomputes them in PyTorch).
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "ag/safetensors.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/option_files.hpp"
#include "lab/memory.hpp"
#include "lab/trainer.hpp"
#include "programs/pe/commands.hpp"

namespace pe {

namespace {

struct ExportFlags {
  std::string checkpoint, out;
  std::int64_t length = 0, batch = 2;
  std::uint64_t seed = 1;
  std::vector<std::string> options;
};

// An existing --out is replaced only if it is a regular file (as pe heatmap replaces its PNG):
// a folder, a device or a symbolic link is refused before anything is computed.
void check_out_path(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::symlink_status(out, error);
  if (!fs::exists(status)) return;
  ag::check(fs::is_regular_file(status), "export", "--out '", out,
            "' exists and is not a regular file (a folder, a link or a device): give a new name");
}

// The check input: ids uniform over the vocabulary, from their own seed.
ag::Indices check_tokens(std::int64_t batch, std::int64_t length, std::int64_t vocab,
                         std::uint64_t seed) {
  ag::Rng rng(seed);
  ag::Indices ids{std::vector<std::int64_t>(static_cast<std::size_t>(batch * length)),
                  {batch, length}};
  for (auto& id : ids.values) id = rng.randint(0, vocab);
  return ids;
}

// What a reimplementation needs besides the tensors, as JSON: the decoder's sizes and its
// encoding with the options as the run gives them (unset options keep the encoding's defaults).
nlohmann::json model_json(Trainer& trainer) {
  const TrainConfig& c = trainer.config();
  const Decoder& model = trainer.model();
  return {{"encoding", c.encoding},
          {"encoding_options", c.encoding_options},
          {"vocab", model.config.vocab},
          {"width", model.config.width},
          {"heads", model.config.heads},
          {"layers", model.config.layers},
          {"ffn_width", model.config.ffn_width},
          {"causal", model.config.causal},
          {"sink_logits", model.config.sink_logits},
          {"activation", "relu"},
          {"norm", "pre"},
          {"layer_norm_eps", model.final_norm.eps},
          {"tied_head", false},
          {"train_length", c.length},
          {"max_length", c.table_length()}};
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  auto* cmd = app.add_subcommand(
      "export", "a checkpoint as safetensors: parameters, configuration, and check logits");
  cmd->add_option("checkpoint", flags->checkpoint, "checkpoint.agt written by pe train")
      ->required()
      ->check(existing_file());
  cmd->add_option("--out", flags->out, "the .safetensors file to write")
      ->required()
      ->check(not_empty("a file name"));
  cmd->add_option("--length", flags->length, "T of the check input (default: the training length)")
      ->check(whole_number<std::int64_t>(limits::length.low, limits::length.high));
  cmd->add_option("--batch", flags->batch, "B of the check input")
      ->capture_default_str()
      ->check(whole_number<std::int64_t>(1, 64));
  cmd->add_option("--seed", flags->seed, "the check input's token ids")
      ->capture_default_str()
      ->check(whole_number<std::uint64_t>(0));
  cmd->add_option("--option,-o", flags->options,
                  "encoding option key=value replacing the checkpoint's (as in pe eval), e.g. "
                  "-o scaling=yarn -o scale=4 -o train_length=32 for a RoPE model");
  cmd->callback([flags] {
    check_out_path(flags->out);
    auto trainer = Trainer::load(flags->checkpoint, parse_pairs(flags->options, "--option"));
    const TrainConfig& config = trainer->config();
    const std::int64_t length = flags->length ? flags->length : config.length;
    check_memory(config, config.model.vocab, length);
    const ag::Indices tokens = check_tokens(flags->batch, length, config.model.vocab, flags->seed);
    ag::Tensor logits;
    {
      ag::NoGradGuard no_grad;
      try {
        logits = trainer->model().forward(tokens);  // [B, T, V]
      } catch (const ag::Error& e) {
        // a learned table shorter than --length, ...
        throw ag::Error("export: this model cannot run the check input of length " +
                        std::to_string(length) + " (" + e.what() + ")");
      }
    }
    ag::SafetensorsEntries entries;
    for (const auto& [name, parameter] : trainer->model().named_parameters())
      entries.emplace_back(name, parameter);
    entries.emplace_back("check.tokens", tokens);
    entries.emplace_back("check.logits", logits);
    const nlohmann::json check = {
        {"batch", flags->batch}, {"length", length}, {"seed", flags->seed}, {"offset", 0}};
    ag::save_safetensors(
        flags->out, entries,
        {{"format",
          "pe export 1: parameters under their checkpoint names; check.tokens [B, T] "
          "and the logits check.logits [B, T, V] of the C++ forward"},
         {"model", model_json(*trainer).dump()},
         {"check", check.dump()},
         {"config", nlohmann::json(config).dump()},
         {"versions", nlohmann::json(build_versions()).dump()}});
    std::printf("wrote %s (%zu parameters, check logits [%ld, %ld, %ld])\n", flags->out.c_str(),
                entries.size() - 2, long(flags->batch), long(length), long(config.model.vocab));
  });
}

}  // namespace pe
