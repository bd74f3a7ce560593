// Decoding speed: tokens per second when a model of chapter 8's text bench (width 64, 8 heads,
// 2 layers, feed-forward 256, a character vocabulary of 96) generates after a short prompt up
// to each total length, three ways, for RoPE and ALiBi:
//   (a) no cache: the whole sequence again for every new token (quadratic in the length);
//   (b) chapter 1's KVCache: Decoder::forward on one token at a time;
//   (c) chapter 12's WindowCache with S sinks and a window of W, in each position mode
//       (cache: the kept keys rotated again at their places; original: their stream
//       positions).
// Each way's rate is also given as a ratio to (b)'s at the same length, measured in the same
// process (the project's rule: speeds are compared as ratios against a reference run in the same
// process, never asserted in a test). The weights are untrained (random): speed does not depend
// on what they say, and generation is greedy (argmax), so every way produces a sequence of the
// same length. (a) is skipped above --uncached-max, 256 by default (at 1024 it takes 40 s on
// the machine of the book's numbers; at 4096, many minutes).
//
// --summary FILE writes what it printed and its numbers by name, as JSON (written whole):
// lengths.<T>.<encoding>.<way>.{tokens_per_second, ratio_to_kv, seconds}, with way one of
// uncached, kv, window_cache, window_original; machine; versions.
//
//   bench_decode [--lengths 256,1024,4096] [--prompt 16] [--sinks 4] [--window 60]
//                [--uncached-max 256] [--threads 1] [--encodings rope,alibi] [--summary FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/files.hpp"
#include "ag/tensor.hpp"
#include "ag/threads.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "chapters/05-rope/rope.hpp"
#include "chapters/06-alibi/alibi.hpp"
#include "chapters/12-inference/window_cache.hpp"
#include "programs/bench/peak_fma.hpp"

namespace {

// Chapter 8's text bench (length_plan.hpp): width 64 in 8 heads, feed-forward 256; 2 layers.
// 96 ids: printable ASCII with newline and tab, the most the character model can have.
pe::DecoderConfig bench_model() {
  pe::DecoderConfig config;
  config.vocab = 96;
  config.width = 64;
  config.heads = 8;
  config.layers = 2;
  config.ffn_width = 256;
  return config;
}

// The id of the largest logit in the last row of `logits` ([..., V]).
std::int64_t greedy(const ag::Tensor& logits) {
  const std::vector<double> values = logits.to_vector();
  const auto V = logits.size(-1);
  const auto last = values.end() - V;
  return std::max_element(last, values.end()) - last;
}

std::vector<std::int64_t> prompt_of(std::int64_t length, std::int64_t vocab) {
  ag::Rng rng(7);
  std::vector<std::int64_t> prompt(length);
  for (auto& id : prompt) id = rng.randint(0, vocab);
  return prompt;
}

ag::Indices row(const std::vector<std::int64_t>& ids) {
  return {ids, {1, static_cast<std::int64_t>(ids.size())}};
}

// (a): the whole sequence through the model for every token it adds.
std::vector<std::int64_t> generate_uncached(pe::Decoder& model, std::vector<std::int64_t> ids,
                                            std::int64_t total) {
  while (static_cast<std::int64_t>(ids.size()) < total)
    ids.push_back(greedy(model.forward(row(ids))));
  return ids;
}

// (b): the prompt in one forward pass, then one token at a time through the KVCache.
std::vector<std::int64_t> generate_kv(pe::Decoder& model, std::vector<std::int64_t> ids,
                                      std::int64_t total) {
  pe::KVCache cache;
  std::int64_t next = greedy(model.forward(row(ids), 0, &cache));
  while (static_cast<std::int64_t>(ids.size()) < total) {
    ids.push_back(next);
    if (static_cast<std::int64_t>(ids.size()) == total) break;
    next = greedy(model.forward(row({next}), cache.length(), &cache));
  }
  return ids;
}

// (c): every token, the prompt's too, one step of the window cache.
std::vector<std::int64_t> generate_window(pe::Decoder& model, std::vector<std::int64_t> ids,
                                          std::int64_t total, const pe::WindowOptions& options) {
  pe::WindowCache cache(model, options);
  std::int64_t next = 0;
  for (std::int64_t id : ids) next = greedy(cache.step(id));
  while (static_cast<std::int64_t>(ids.size()) < total) {
    ids.push_back(next);
    if (static_cast<std::int64_t>(ids.size()) == total) break;
    next = greedy(cache.step(next));
  }
  return ids;
}

template <typename Generate>
double seconds_of(Generate&& generate) {
  const auto start = std::chrono::steady_clock::now();
  generate();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// The program itself; main runs it in the book's frame (base/program_frame.hpp).
static int program_main(int argc, char** argv) {
  std::vector<std::int64_t> lengths{256, 1024, 4096};
  std::vector<std::string> encodings{"rope", "alibi"};
  std::int64_t prompt_length = 16, uncached_max = 256;
  int threads = 1;
  pe::WindowOptions window;
  window.sinks = 4;
  window.window = 60;
  std::string summary_path;
  CLI::App app{
      "Decoding speed of chapter 8's bench model (untrained): no cache, the KVCache, and "
      "chapter 12's window cache, as tokens per second and ratios to the KVCache",
      "bench_decode"};
  app.add_option("--lengths", lengths, "total lengths generated to (prompt included)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(2, 1 << 20));
  app.add_option("--encodings", encodings, "registered encodings timed (chapters 5 and 6 here)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--prompt", prompt_length, "prompt tokens (random ids) before generating")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(1, 4096));
  app.add_option("--sinks", window.sinks, "S: the window cache's sinks")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(0, 4096));
  app.add_option("--window", window.window, "W: the window cache's window")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(1, 1 << 20));
  app.add_option("--uncached-max", uncached_max,
                 "the longest length (a) runs at (it grows as the square of the length)")
      ->capture_default_str()
      ->check(pe::whole_number<std::int64_t>(0, 1 << 20));
  app.add_option("--threads", threads, "threads of the kernels")
      ->capture_default_str()
      ->check(pe::whole_number(1, 64));
  app.add_option("--summary", summary_path,
                 "also write what it printed and its numbers by name to this JSON file")
      ->check(pe::not_empty("a file"));
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  for (std::int64_t T : lengths) {
    if (T <= prompt_length) {
      std::cerr << "bench_decode: length " << T << " is not longer than the prompt ("
                << prompt_length << " tokens)\n";
      return 2;
    }
  }
  nlohmann::json summary = {
      {"program", "bench_decode"},        {"prompt", prompt_length},    {"sinks", window.sinks},
      {"window", window.window},          {"threads", threads},         {"trained", false},
      {"versions", pe::build_versions()}, {"machine", bench::machine()}};
  summary["machine"]["load_average"] = bench::load_average();
  std::unique_ptr<pe::StdoutCapture> capture;
  if (!summary_path.empty()) capture = std::make_unique<pe::StdoutCapture>();
  ag::set_max_threads(threads);
  pe::register_ch05_encodings();
  pe::register_ch06_encodings();
  const pe::DecoderConfig config = bench_model();
  std::printf(
      "decoding: width %ld, %ld heads, %ld layers, feed-forward %ld, vocabulary %ld, untrained "
      "weights, greedy; prompt %ld tokens, %d thread(s), window cache S = %ld, W = %ld\n",
      long(config.width), long(config.heads), long(config.layers), long(config.ffn_width),
      long(config.vocab), long(prompt_length), threads, long(window.sinks), long(window.window));
  summary["model"] = {{"width", config.width},
                      {"heads", config.heads},
                      {"layers", config.layers},
                      {"ffn_width", config.ffn_width},
                      {"vocab", config.vocab}};
  std::printf("%-8s %6s  %-22s %12s %10s %9s\n", "encoding", "length", "way", "tokens/s", "seconds",
              "vs kv");
  try {
    const ag::NoGradGuard no_graph;  // decoding: no gradient is ever needed
    const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    for (const std::string& name : encodings) {
      ag::Rng rng(1);
      pe::EncodingSpec spec;
      spec.model = config;
      spec.max_length = longest;
      pe::Decoder model(config, pe::make_encoding(name, spec, rng), rng);
      // a short run first, so that no timed run pays for the first allocations
      generate_kv(model, prompt_of(prompt_length, config.vocab), prompt_length + 32);
      for (std::int64_t T : lengths) {
        const std::vector<std::int64_t> prompt = prompt_of(prompt_length, config.vocab);
        const double generated = double(T - prompt_length);
        const double kv_seconds = seconds_of([&] { generate_kv(model, prompt, T); });
        const double kv_rate = generated / kv_seconds;
        nlohmann::json& at = summary["lengths"][std::to_string(T)][name];
        auto report = [&](const std::string& way, double seconds) {
          const double rate = generated / seconds;
          std::printf("%-8s %6ld  %-22s %12.0f %10.3f %9.2f\n", name.c_str(), long(T), way.c_str(),
                      rate, seconds, rate / kv_rate);
          std::fflush(stdout);
          at[way] = {
              {"tokens_per_second", rate}, {"seconds", seconds}, {"ratio_to_kv", rate / kv_rate}};
        };
        if (T <= uncached_max)
          report("uncached", seconds_of([&] { generate_uncached(model, prompt, T); }));
        else
          std::printf("%-8s %6ld  %-22s %12s %10s %9s\n", name.c_str(), long(T), "uncached",
                      "skipped", "", "");
        report("kv", kv_seconds);
        for (pe::StreamPositions mode :
             {pe::StreamPositions::cache, pe::StreamPositions::original}) {
          pe::WindowOptions options = window;
          options.positions = mode;
          report("window_" + pe::stream_positions_name(mode),
                 seconds_of([&] { generate_window(model, prompt, T, options); }));
        }
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_decode: " << e.what() << "\n";
    return 1;
  }
  if (capture) {
    summary["output"] = pe::split_lines(capture->finish());
    try {
      ag::write_file_atomically(summary_path, summary.dump(1) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "bench_decode: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "summary in " << summary_path << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "bench_decode", [&] { return program_main(argc, argv); }, "measuring decoding");
}
