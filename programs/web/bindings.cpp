// The live pages' whole interface to the book's code (embind): a few functions and one class,
// each taking and returning JSON text, so that the Web Worker (page/worker.js) passes
// requests and answers through without knowing any C++ type. Like `pe`, this layer sits
// above lab/; the pages know nothing below it.
//
// A request that the code refuses (an ag::Error, or JSON of the wrong shape) comes back as
// {"error": "<one line>"}, which the page shows where the figure would be.
#include <emscripten/bind.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ag/simd.hpp"
#include "ag/versions.hpp"
#include "lab/chapter_registry.hpp"
#include "lab/inspect.hpp"
#include "programs/web/live_content.hpp"
#include "programs/web/live_distance.hpp"
#include "programs/web/live_permutation.hpp"
#include "programs/web/live_rope.hpp"
#include "programs/web/live_rope_config.hpp"
#include "programs/web/live_stream.hpp"
#include "programs/web/live_training.hpp"

namespace pe::live {

namespace {

std::string answer(const std::function<nlohmann::json()>& work) {
  try {
    return work().dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}}.dump();
  }
}

nlohmann::json parse(const std::string& text) { return nlohmann::json::parse(text); }

/// Writes the character model's text (shipped_corpus) where the charlm task reads it by
/// default, in the module's own file system, unless a file is there already.
void install_stream_corpus() {
  const std::filesystem::path path(kStreamCorpusPath);
  if (std::filesystem::exists(path)) return;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  const std::string_view text = shipped_corpus();
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// `pe inspect` (lab/inspect.hpp) on {"encoding", "length", "dim", "heads",
/// "options", "vector", "positions"}; a missing key keeps the command's default.
std::string inspect(const std::string& request) {
  return answer([&] {
    const nlohmann::json j = parse(request);
    InspectRequest r;
    for (const auto& [key, value] : j.items())
      ag::check(key == "encoding" || key == "length" || key == "dim" || key == "heads" ||
                    key == "options" || key == "vector" || key == "positions",
                "inspect", "unknown key '", key, "'");
    r.encoding = j.at("encoding").get<std::string>();
    r.length = j.value("length", r.length);
    r.dim = j.value("dim", r.dim);
    r.heads = j.value("heads", r.heads);
    r.options = j.value("options", r.options);
    r.vector = j.value("vector", r.vector);
    r.positions = j.value("positions", r.positions);
    return inspect_encoding(r);
  });
}

std::string permutation(const std::string& request) {
  return answer([&] { return permutation_outputs(parse(request)); });
}

std::string rope(const std::string& request) {
  return answer([&] { return rope_scores(parse(request)); });
}

std::string distance(const std::string& request) {
  return answer([&] { return distance_biases(parse(request)); });
}

std::string content(const std::string& request) {
  return answer([&] { return content_gates(parse(request)); });
}

/// Chapter 11: a config.json explained (live_rope_config.hpp). A config that is not JSON, or
/// that the chapter refuses, comes back as {"error": "<source>: ..."}, one line.
std::string rope_config_answer(const std::string& request) {
  return answer([&] { return rope_config(parse(request)); });
}

/// Chapter 11's example configs; the request is ignored.
std::string rope_config_list(const std::string&) {
  return answer([] { return rope_config_examples(); });
}

/// A training run held by the worker between slices. Its constructor cannot answer with
/// JSON, so a configuration that fails its checks leaves it empty and error() says why.
class Training {
 public:
  explicit Training(const std::string& config) {
    const std::string status = answer([&] {
      run_ = std::make_unique<LiveTraining>(config);
      return nlohmann::json::object();
    });
    if (!run_) error_ = status;
  }
  std::string error() const { return error_; }  ///< "" or {"error": ...}
  std::string advance(int steps) {
    return call([&] { return run_->advance(steps); });
  }
  std::string attention(int length) {
    return call([&] { return run_->attention(length); });
  }
  std::string evaluate_lengths(const std::string& request) {
    return call([&] { return run_->evaluate_lengths(parse(request)); });
  }
  std::string inspect(int length) {
    return call([&] { return run_->inspect(length); });
  }
  /// Chapter 12: the trained model reads a stream through the window cache (live_stream.hpp).
  std::string stream(const std::string& request) {
    return call([&] { return stream_losses(run_->trainer(), parse(request)); });
  }

 private:
  std::string call(const std::function<nlohmann::json()>& work) {
    return run_ ? answer(work) : error_;
  }
  std::unique_ptr<LiveTraining> run_;
  std::string error_;
};

/// What the module runs on, for the page's status line: {"simd", "libraries"}. The request
/// is ignored (every function here takes one).
std::string build(const std::string&) {
  return nlohmann::json{{"simd", ag::simd_path_name()}, {"libraries", ag::library_versions()}}
      .dump();
}

}  // namespace

}  // namespace pe::live

EMSCRIPTEN_BINDINGS(pe_live) {
  using namespace pe::live;
  pe::register_chapter_encodings();  // every encoding of chapters 2-12, once, at start-up
  install_stream_corpus();           // chapter 12's character model reads it (charlm's default)
  emscripten::function("build", &build);
  emscripten::function("inspect", &inspect);
  emscripten::function("permutation", &permutation);
  emscripten::function("rope", &rope);
  emscripten::function("distance", &distance);
  emscripten::function("content", &content);
  emscripten::function("ropeConfig", &rope_config_answer);
  emscripten::function("ropeConfigExamples", &rope_config_list);
  emscripten::class_<Training>("Training")
      .constructor<std::string>()
      .function("error", &Training::error)
      .function("advance", &Training::advance)
      .function("attention", &Training::attention)
      .function("evaluateLengths", &Training::evaluate_lengths)
      .function("inspect", &Training::inspect)
      .function("stream", &Training::stream);
}
