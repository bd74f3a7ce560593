// Chapter 0's experiment: the autograd library trains a small MLP to separate two spirals.
//
//   ch00_experiment [--steps N] [--seed S] [--out DIR] [--summary FILE]   (--help for more)
//
// Prints "step  loss  accuracy" every steps/10 steps and after the last one, then a table of
// finite-difference errors in float32 and float64 (why gradcheck uses float64), and writes
// DIR/loss.csv (every step), DIR/graph.dot (the tape of one forward pass of the loss) and the
// summary the chapter quotes (DIR/summary.json unless --summary names another file: the book's
// copy is chapters/00-autograd/results/summary.json).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ag/files.hpp"
#include "ag/graphviz.hpp"
#include "ag/optim.hpp"
#include "base/build_record.hpp"
#include "base/command_line.hpp"
#include "base/folder_lock.hpp"
#include "base/program_frame.hpp"
#include "base/stdout_capture.hpp"
#include "chapters/00-autograd/mlp.hpp"
#include "chapters/00-autograd/spirals.hpp"

namespace {

// A bound against typing mistakes: a million steps of this MLP is far past what it needs.
constexpr long kMostSteps = 1000000;

struct Options {
  long steps = 1000;
  std::uint64_t seed = 0;
  std::string out = "results/ch00";
  std::string summary = "";  // empty: out/summary.json
};

// Why gradient checks run in float64: the central difference of tanh at x = 0.5, computed
// the way gradcheck does it (perturb the stored value, difference, divide by 2 eps), against
// the exact derivative 1 - tanh(x)^2. Truncation error shrinks like eps^2; round-off grows
// like (machine epsilon) / eps, and float32's machine epsilon is 2^-23, float64's 2^-52.
void print_difference_errors(nlohmann::json& summary) {
  const double x = 0.5, exact = 1.0 - std::tanh(x) * std::tanh(x);
  std::printf("\ncentral difference of tanh at x = 0.5, |numeric - exact|:\n");
  std::printf("%8s  %9s  %9s\n", "eps", "float32", "float64");
  for (double eps : {1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8}) {
    double error[2];
    for (ag::Dtype dtype : {ag::Dtype::f32, ag::Dtype::f64}) {
      const double up = ag::tanh(ag::scalar(x + eps, dtype)).item();
      const double down = ag::tanh(ag::scalar(x - eps, dtype)).item();
      error[dtype == ag::Dtype::f64] = std::abs((up - down) / (2 * eps) - exact);
    }
    std::printf("%8.0e  %9.1e  %9.1e\n", eps, error[0], error[1]);
    char name[16];
    std::snprintf(name, sizeof name, "%.0e", eps);
    summary["differences"][name] = {{"float32", error[0]}, {"float64", error[1]}};
  }
}

}  // namespace

// The experiment itself; main runs it in the book's frame (base/program_frame.hpp).
static int experiment_main(int argc, char** argv) {
  Options options;
  CLI::App app{"Chapter 0: the autograd library trains a small MLP to separate two spirals.",
               "ch00_experiment"};
  app.add_option("--steps", options.steps, "training steps")
      ->capture_default_str()
      ->check(pe::whole_number(1L, kMostSteps));
  app.add_option("--seed", options.seed, "random seed (data and weights)")
      ->capture_default_str()
      ->check(pe::whole_number<std::uint64_t>(0));
  app.add_option("--out", options.out, "folder for loss.csv and graph.dot")
      ->capture_default_str()
      ->check(pe::not_empty("a folder"));
  app.add_option("--summary", options.summary,
                 "file for the summary of the numbers the chapter quotes (default: "
                 "<out>/summary.json)")
      ->check(pe::not_empty("a file"));
  if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  pe::source_commit();  // read as the run starts: the summary names the sources it ran
  const pe::FolderLock lock(options.out, "");  // one writer: a second one is refused at once
  const std::string csv_path = options.out + "/loss.csv";
  std::ostringstream csv;  // written whole at the end (ag::write_file_atomically)
  csv << "step,loss,accuracy\n";
  nlohmann::json summary = {{"experiment", "ch00_experiment"},
                            {"steps", options.steps},
                            {"seed", options.seed},
                            {"versions", pe::build_versions()}};
  pe::StdoutCapture capture;  // what it prints goes to the summary too

  // Separate streams, so that changing the data never changes the initial weights.
  const ag::Rng root(options.seed);
  ag::Rng data_rng = root.fork(1), init_rng = root.fork(2);
  const ch00::Dataset data = ch00::two_spirals(100, 0.02, data_rng);
  ch00::MLP model({2, 16, 16, 2}, init_rng);
  ag::Adam optimizer(model.parameters(), 0.02);

  std::cout << "two spirals, " << data.y.values.size() << " points; MLP 2-16-16-2 (tanh), "
            << model.parameter_count() << " parameters; Adam lr 0.02; seed " << options.seed
            << "\n";
  std::printf("%6s  %8s  %8s\n", "step", "loss", "accuracy");
  const long every = std::max(1L, options.steps / 10);
  // [training-loop]
  for (long step = 0; step <= options.steps; ++step) {
    const ag::Tensor logits = model.forward(data.x);
    const ag::Tensor loss = ag::composite::cross_entropy(logits, data.y);
    const double acc = ch00::accuracy(logits, data);
    csv << step << "," << loss.item() << "," << acc << "\n";
    if (step == 0) ag::write_dot(loss, options.out + "/graph.dot");
    if (step % every == 0 || step == options.steps) {
      std::printf("%6ld  %8.4f  %8.3f\n", step, loss.item(), acc);
      summary["history"][std::to_string(step)] = {{"loss", loss.item()}, {"accuracy", acc}};
    }
    if (step == options.steps) break;  // the last line measures the trained model
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  // [training-loop]
  ag::write_file_atomically(csv_path, csv.str());
  print_difference_errors(summary);
  const std::string summary_path =
      options.summary.empty() ? options.out + "/summary.json" : options.summary;
  std::cout << "\nwrote " << csv_path << " and " << options.out << "/graph.dot\n";
  summary["output"] = pe::split_lines(capture.finish());
  ag::write_file_atomically(summary_path, summary.dump(1) + "\n");
  std::cerr << "summary of the quoted results in " << summary_path << "\n";
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "ch00_experiment", [&] { return experiment_main(argc, argv); }, "training the spiral MLP");
}
