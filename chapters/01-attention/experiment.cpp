// Chapter 1's experiment: without positions and without the causal mask, attention cannot
// tell "dog bites man" from "man bites dog"; with the mask it can.
//
//   ch01_experiment [--seed S] [--trials N] [--summary FILE]   (--help for more)
//
// Prints the differences, and writes them with what it printed to the summary the chapter
// quotes (results/ch01/summary.json unless --summary names another file: the book's copy is
// chapters/01-attention/results/summary.json).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "ag/files.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/permutation.hpp"

using ag::Tensor;

namespace {

struct Options {
  std::uint64_t seed = 1;
  int trials = 100;
  std::string summary = "results/ch01/summary.json";
};

// "no_mask" or "causal": the summary's key for a model with or without the mask.
const char* mask_key(bool causal) { return causal ? "causal" : "no_mask"; }

// Hidden states [1, T, C] of the last block for a sentence of word ids.
Tensor encode(pe::Decoder& model, const std::vector<std::int64_t>& words) {
  return model.hidden_states({words, {1, static_cast<std::int64_t>(words.size())}}).back();
}

double max_abs(const Tensor& a) {
  double worst = 0;
  for (double v : a.to_vector()) worst = std::max(worst, std::abs(v));
  return worst;
}

void compare_sentences(bool causal, std::uint64_t seed, nlohmann::json& summary) {
  pe::DecoderConfig config;  // the reference model: width 256, 1 head, feed-forward 1024
  config.vocab = 3;
  config.causal = causal;
  ag::Rng rng(seed);
  pe::Decoder model(config, std::make_shared<pe::NoEncoding>(), rng);
  ag::NoGradGuard no_grad;
  const std::vector<std::int64_t> dog_bites_man{0, 1, 2}, man_bites_dog{2, 1, 0};
  Tensor a = encode(model, dog_bites_man);
  Tensor b = encode(model, man_bites_dog);
  // "man bites dog" is "dog bites man" read in the order 2, 1, 0.
  const double diff = pe::max_abs_difference(pe::reorder_positions(a, {2, 1, 0}), b);
  std::cout << std::left << std::setw(16) << (causal ? "causal mask" : "no mask")
            << "max |h(man bites dog) - permuted h(dog bites man)| = " << std::scientific
            << std::setprecision(2) << diff << "   (values are of size " << max_abs(a) << ")\n";
  summary["sentences"][mask_key(causal)] = {{"difference", diff}, {"size", max_abs(a)}};
}

void random_permutations(bool causal, const Options& options, nlohmann::json& summary) {
  pe::DecoderConfig config;
  config.causal = causal;
  ag::Rng rng(options.seed);
  pe::Decoder model(config, std::make_shared<pe::NoEncoding>(), rng);
  ag::Rng data = rng.fork(1);
  ag::NoGradGuard no_grad;
  const std::int64_t T = 32;
  double worst = 0, smallest = INFINITY;
  for (int trial = 0; trial < options.trials; ++trial) {
    std::vector<std::int64_t> words(T), order(T);
    for (auto& w : words) w = data.randint(0, config.vocab);
    for (std::int64_t i = 0; i < T; ++i) order[i] = i;
    for (std::int64_t i = T - 1; i > 0; --i) std::swap(order[i], order[data.randint(0, i + 1)]);
    std::vector<std::int64_t> shuffled(T);
    for (std::int64_t i = 0; i < T; ++i) shuffled[i] = words[order[i]];
    const double diff = pe::max_abs_difference(encode(model, shuffled),
                                               pe::reorder_positions(encode(model, words), order));
    worst = std::max(worst, diff);
    smallest = std::min(smallest, diff);
  }
  std::cout << std::left << std::setw(16) << (causal ? "causal mask" : "no mask") << options.trials
            << " random shuffles of 32 letters: difference from min " << std::scientific
            << std::setprecision(2) << smallest << " to max " << worst << "\n";
  summary["shuffles"][mask_key(causal)] = {{"smallest", smallest}, {"largest", worst}};
}

// The experiment, printed and recorded: its summary is written whole once everything ran.
void run(const Options& options) {
  pe::source_commit();  // read as the run starts: the summary names the sources it ran
  const std::filesystem::path path(options.summary);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  nlohmann::json summary = {{"experiment", "ch01_experiment"},
                            {"seed", options.seed},
                            {"trials", options.trials},
                            {"versions", pe::build_versions()}};
  pe::StdoutCapture capture;  // what it prints goes to the summary too
  std::cout << "Untrained reference decoder (1 layer, 1 head, width 256, feed-forward 1024), "
               "no positional encoding, seed "
            << options.seed << ", float32.\n\n";
  compare_sentences(false, options.seed, summary);
  compare_sentences(true, options.seed, summary);
  std::cout << "\n";
  random_permutations(false, options, summary);
  random_permutations(true, options, summary);
  std::cout << "\nWithout the mask the two sentences give the same set of vectors (the difference "
               "is float32 round-off);\nwith the mask, each position sees only its prefix, so "
               "order changes the vectors.\n";
  summary["output"] = pe::split_lines(capture.finish());
  ag::write_file_atomically(options.summary, summary.dump(1) + "\n");
  std::cerr << "summary of the quoted results in " << options.summary << "\n";
}

}  // namespace

// The experiment itself; main runs it in the book's frame (base/program_frame.hpp).
static int experiment_main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "Chapter 1: without positions and without the causal mask, attention cannot tell "
      "\"dog bites man\" from \"man bites dog\".",
      "ch01_experiment"};
  app.add_option("--seed", options.seed, "random seed (weights and shuffles)")
      ->capture_default_str()
      ->check(pe::whole_number<std::uint64_t>(0));
  app.add_option("--trials", options.trials, "random shuffles of 32 letters")
      ->capture_default_str()
      ->check(pe::whole_number(1, 1000000));
  app.add_option("--summary", options.summary,
                 "file for the summary of the numbers the chapter quotes (its folder is made)")
      ->capture_default_str()
      ->check(pe::not_empty("a file"));
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  run(options);
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "ch01_experiment", [&] { return experiment_main(argc, argv); }, "comparing the sentences");
}
