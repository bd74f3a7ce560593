// `pe table`: the book's encodings on the reference tasks, as a markdown table and JSON: Part
// I's by default (chapters 2 to 8, the table the chapters and the README quote), Part II's or
// all of them on request. `--fast` gives the same verdicts quickly.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chapters/01-attention/encoding_registry.hpp"
#include "lab/run.hpp"
#include "lab/trainer.hpp"

namespace pe {

/// Which encodings `pe table` trains when it is given no --encodings: the book's parts, by the
/// chapter that registers each encoding. One table of every chapter would grow with each
/// chapter (16 runs for Part I, 24 with chapter 9), so the default stays Part I's.
enum class TablePart {
  one,  ///< "1": Part I's, chapters below kFirstChapterOfPartTwo (the quoted table)
  two,  ///< "2": Part II's, chapter kFirstChapterOfPartTwo on
  all   ///< "all": every registered encoding
};

/// Part II's first chapter (learned distance functions).
constexpr int kFirstChapterOfPartTwo = 9;

/// "1", "2" or "all"; anything else is an ag::Error that names the three.
TablePart table_part_from(const std::string& text);

/// The names of the encodings of `part` among `registered`, in their order. An entry whose
/// chapter is not a number is an ag::Error naming it.
std::vector<std::string> table_encodings(const std::vector<EncodingEntry>& registered,
                                         TablePart part);

/// The options of `pe table`.
struct TableOptions {
  std::int64_t steps = 1500;           ///< steps per run of the full table (--fast has its own)
  std::uint64_t seed = 1;              ///< the seed of every run
  std::string out_dir;                 ///< empty: results/table, or results/table-fast with `fast`
  std::vector<std::string> encodings;  ///< empty: the registered encodings of `part`
  TablePart part = TablePart::one;     ///< used when `encodings` is empty
  std::vector<std::string> tasks{"shiftk", "alternating"};  ///< the tasks, in table order
  std::vector<std::int64_t> layers{1};  ///< the depths to train each combination at
  bool fast = false;  ///< the fast configuration (fast_table_config), for a first look
  /// Take the results of a run already finished in its folder with the same configuration
  /// instead of training it again (the table marks such rows).
  bool reuse = false;
  /// Evaluation lengths: with any, every row's model is also evaluated, without retraining,
  /// at each of them by `length_table`, into out_dir/lengths.md and lengths.json.
  std::vector<std::int64_t> lengths;
  /// Chapter 8's hook (write_length_table): evaluates the finished rows at `lengths`, writes
  /// the length table into the table's folder and returns its markdown. Without it, lengths
  /// are refused before anything trains.
  std::function<std::string(const std::vector<FinishedRun>& rows,
                            const std::vector<std::int64_t>& lengths, const std::string& out_dir)>
      length_table;
  /// Runs trained at once, each with one OpenMP thread (0: one per core; 1: one after the
  /// other, each with every core). More than the cores is capped to them, with a note.
  int jobs = 0;
  /// Replace runs of other configurations that the rows' folders hold (run_training).
  bool overwrite = false;
};

/// The configuration of one row of the table: the reference model and run (TrainConfig's
/// defaults) with options.steps and options.seed, or with `fast` the fast configuration.
TrainConfig table_config(const TableOptions& options, const std::string& encoding,
                         const std::string& task, std::int64_t layers);

/// `pe table --fast`: the reference model's shape (1 head, pre-LN, ReLU, sequences of 32,
/// batch 64, the same tasks) at a quarter of its width (64, feed-forward 256, the same 1:4
/// ratio), trained 400 steps at a peak rate of 5e-3 after 50 warm-up steps, scored on 64
/// held-out sequences. A smaller model at a higher rate converges in fewer steps: with
/// seeds 1 and 2 every row reaches the full table's verdict (ShiftK at or above 95% for the
/// encodings that give the head a relative position, at or below 25% for none and
/// single-head ALiBi; AlternatingChar 100%) in about a minute on 2 cores.
TrainConfig fast_table_config(TrainConfig config);

/// The line `pe table --fast` prints first: the configuration and what the table is for.
std::string fast_table_note();

/// Runs every (encoding, task, layers) combination with the reference model (the encodings
/// are options.encodings, or without them those of options.part, of which there must be one),
/// writes out_dir/table.md and out_dir/table.json and each run's folder, and prints the table; with
/// options.lengths, also the table of held-out accuracy at each length (options.length_table),
/// and without, removes the lengths.md and lengths.json of an earlier table. Everything is
/// checked before the first run trains (check_run_list): a name given twice, an unknown
/// encoding or task, an option, a folder that holds a run of another configuration. The
/// table holds its folder's lock (folder_lock.hpp) throughout.
void run_table(const TableOptions& options);

}  // namespace pe
