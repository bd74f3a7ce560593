// `pe table`: every encoding in the build on the reference tasks, as a markdown table and
// JSON. The chapters and the docs quote this table.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pe {

/// The options of `pe table`.
struct TableOptions {
  std::int64_t steps = 1500;              ///< training steps per run
  std::uint64_t seed = 1;                 ///< the seed of every run
  std::string out_dir = "results/table";  ///< where the table and the runs go
  std::vector<std::string> encodings;  ///< empty: every registered encoding
  std::vector<std::string> tasks{"shiftk", "alternating"};  ///< the tasks, in table order
  std::vector<std::int64_t> layers{1};  ///< the depths to train each combination at
  bool fast = false;  ///< fewer steps and held-out sequences, for a first look
  /// Take the results of a run already finished in its folder with the same configuration
  /// instead of training it again (the table marks such rows).
  bool reuse = false;
  /// Runs trained at once, each with one OpenMP thread (0: one per core; 1: one after the
  /// other, each with every core).
  int jobs = 0;
};

/// Runs every (encoding, task, layers) combination with the reference model, writes
/// out_dir/table.md and out_dir/table.json and each run's folder, and prints the table.
void run_table(const TableOptions& options);

}  // namespace pe
