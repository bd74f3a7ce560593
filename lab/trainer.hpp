// The trainer: AdamW with warm-up and cosine decay, gradient clipping, fixed seeds, token
// accuracy on held-out sequences of any length, and checkpoints that resume exactly.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ag/optim.hpp"
#include "chapters/01-attention/decoder.hpp"
#include "chapters/01-attention/encoding_registry.hpp"
#include "lab/tasks.hpp"

namespace pe {

/// The range of a whole-number setting, from low to high.
struct Range {
  std::int64_t low;   ///< the smallest value allowed
  std::int64_t high;  ///< the largest value allowed
};

/// The bounds of TrainConfig's whole-number fields, in one place: TrainConfig::validate checks
/// them, and `pe train` checks its options against them as the user wrote them. The upper
/// bounds keep a typing mistake from asking for terabytes.
namespace limits {
inline constexpr std::int64_t kMaxSteps = 1000000000;  ///< far past any run of the book
inline constexpr Range length{1, 100000};              ///< training sequence length
inline constexpr Range batch{1, 100000};               ///< sequences per step
inline constexpr Range width{1, 8192};                 ///< the model width d
inline constexpr Range heads{1, 64};                   ///< attention heads per layer
inline constexpr Range layers{1, 64};                  ///< decoder layers
inline constexpr Range ffn_width{1, 32768};            ///< the feed-forward width
inline constexpr Range eval_every{1, kMaxSteps};       ///< steps between evaluations
inline constexpr Range eval_sequences{1, 1000000};     ///< held-out sequences per evaluation
inline constexpr Range steps{0, kMaxSteps};            ///< training steps
inline constexpr Range warmup{0, kMaxSteps};           ///< warm-up steps
/// The longest length the encoding must handle (0: the training length).
inline constexpr Range max_length{0, 100000};
/// L_max of randomized positions (0: off); at least the training length when on.
inline constexpr Range random_positions{0, 100000};
/// run_training's checkpoint interval (0: only at the end).
inline constexpr Range save_every{0, kMaxSteps};
}  // namespace limits

/// Every default reproduces the reference experiment: 1 layer, 1 head, width 256,
/// feed-forward 1024, ReLU, pre-LN, sequences of 32, batch 64.
struct TrainConfig {
  std::string task = "shiftk";    ///< a registered task (`pe list`)
  TaskOptions task_options;       ///< the task's own options (ShiftK's k, ...)
  std::string encoding = "none";  ///< a registered encoding (`pe list`)
  std::map<std::string, std::string> encoding_options;  ///< the encoding's own options
  DecoderConfig model;                ///< the model's sizes; model.vocab is set from the task
  std::int64_t length = 32;           ///< T of every training sequence
  std::int64_t batch = 64;            ///< B of every training batch
  std::int64_t steps = 1500;          ///< optimisation steps
  std::int64_t warmup = 100;          ///< steps of linear warm-up
  double lr = 1e-3;                   ///< peak learning rate, decayed along a cosine to lr / 10
  double weight_decay = 0.01;         ///< AdamW's decoupled decay
  double clip = 1.0;                  ///< maximum global gradient norm
  std::uint64_t seed = 1;             ///< initial weights and data streams
  std::int64_t eval_every = 100;      ///< steps between held-out evaluations
  std::int64_t eval_sequences = 256;  ///< held-out sequences per evaluation
  std::int64_t max_length = 0;        ///< longest sequence the encoding must handle; 0: length
  /// Randomized positions (Ruoss et al., 2023): L_max, from which each training step draws
  /// the sorted positions of its sequences (one set shared by the batch); 0: off, positions
  /// 0 .. length-1. A model trained so is evaluated at positions drawn likewise
  /// (evaluation_positions in chapters/01-attention/positions.hpp).
  std::int64_t random_positions = 0;

  /// The number of positions the encoding must have (a learned table's rows): max_length
  /// (or length), or L_max when randomized positions reach further.
  std::int64_t table_length() const;

  /// The one check of every field: throws ag::Error naming the first field with a bad value.
  void validate() const;
};

/// Where an evaluation puts the tokens of a model trained at randomized positions.
enum class EvalPositions {
  as_trained,  ///< sorted random positions from 0 .. L_max-1 (Ruoss et al.'s convention)
  contiguous   ///< 0 .. T-1, as for any other model
};

/// Held-out accuracy and loss.
struct Evaluation {
  double accuracy = 0;      ///< fraction of scored target tokens predicted right (argmax)
  double loss = 0;          ///< mean cross-entropy over the scored tokens
  std::int64_t scored = 0;  ///< target tokens that counted (kIgnore ones do not)
};

/// One evaluation during training: a row of history.csv.
struct HistoryPoint {
  std::int64_t step;     ///< steps done
  double train_loss;     ///< the loss of the last training batch
  double lr;             ///< the learning rate of that step
  double eval_accuracy;  ///< held-out accuracy
  double eval_loss;      ///< held-out loss
  double seconds;        ///< training time so far
};

/// What a checkpoint's metadata holds besides the tensors, read strictly: whole-string
/// numbers in range, history entries of six finite numbers with increasing steps.
struct SavedProgress {
  TrainConfig config;                 ///< the run's configuration, checked
  std::int64_t steps_done = 0;        ///< training steps done
  std::int64_t optimizer_steps = 0;   ///< AdamW's step count t
  std::string data_rng;               ///< the data stream's state (Rng::save_state)
  std::vector<HistoryPoint> history;  ///< every evaluation so far
  double seconds = 0;                 ///< training time so far
  std::int64_t save_every = -1;       ///< Trainer::save_every when saved; -1: not recorded
  /// The task's source (charlm's corpus: its characters and the text's hash) when the task
  /// has one; none in checkpoints of older versions, which are read as before.
  std::optional<TaskSource> task_source;
  std::string lineage;  ///< Trainer::lineage when saved; empty: not recorded (older versions)
};

/// Every check Trainer's constructor makes: the configuration, the task (a charlm corpus is
/// read), the encoding and its options, the memory estimate, and one forward pass of a
/// sequence at the training length (an encoding option that cannot serve it, such as a
/// learned table's max_len below --length, is refused naming the option). A list of runs
/// (pe table, a chapter's experiment) checks them all this way before the first one trains.
void check_trainable(const TrainConfig& config);

/// Reads the metadata of a checkpoint written by Trainer::save; `where` names the file in the
/// one-line ag::Error that refuses anything else. Allocates nothing sized by the input beyond
/// the text itself (the configuration is validated, not built).
SavedProgress read_saved_progress(const std::map<std::string, std::string>& metadata,
                                  const std::string& where);

/// Trains one model on one task: builds both from a TrainConfig, steps, evaluates, saves
/// and resumes.
class Trainer {
 public:
  /// Validates the configuration, then builds the task, the model and the optimiser.
  explicit Trainer(TrainConfig config);
  /// Restores a run saved by save(): the same model, optimiser and data streams, so that
  /// training on gives exactly what the uninterrupted run would have given.
  /// encoding_options replace the checkpoint's options of the same name (an empty value
  /// removes one, and must name one the checkpoint has): a rule chosen at evaluation time,
  /// such as RoPE's scaling, that changes no parameter. An option that would change a
  /// parameter's shape fails to load, naming it. A tensor holding NaN or an infinity (a
  /// crafted or damaged file whose checksum still holds) is refused, naming it.
  ///
  /// A charlm checkpoint keeps its corpus' characters and the text's hash: resuming refuses,
  /// naming the corpus file, a corpus that has changed at all since (the training windows and
  /// the held-out set would change with it). Checkpoints of older versions keep neither and
  /// are read as before.
  static std::unique_ptr<Trainer> resume(
      const std::string& checkpoint,
      const std::map<std::string, std::string>& encoding_options = {});
  /// resume() for a model read back to be used rather than trained on (pe eval, generate,
  /// heatmap, export): a charlm corpus whose text changed but whose characters did not is
  /// accepted (the model's tokens still stand for the same characters; the held-out windows
  /// come from the new text); other characters are refused, naming the corpus file.
  static std::unique_ptr<Trainer> load(
      const std::string& checkpoint,
      const std::map<std::string, std::string>& encoding_options = {});
  /// Copies the model's weights from a checkpoint written by save() (not the optimiser, the
  /// steps or the data streams): a fine-tune that starts from a trained model. The two
  /// models must have the same parameters, names and shapes, and the same vocabulary: a
  /// charlm checkpoint refuses a corpus of other characters (another text is the point of a
  /// fine-tune), naming the corpus file.
  void load_weights(const std::string& checkpoint);

  /// One optimisation step on a fresh batch; returns its training loss.
  /// A non-finite loss or gradient norm is an ag::Error naming the step, thrown before the
  /// weights change: the model stays as it was after the last good step.
  double step();
  /// Accuracy on the task's fixed held-out set of `sequences` sequences of `length` tokens.
  /// A model trained at randomized positions is evaluated, as trained, at positions drawn
  /// from 0 .. L_max-1 with a fixed seed (one set per chunk of 64 sequences; a length above
  /// L_max is an ag::Error), or at 0 .. length-1 when asked for `contiguous`.
  Evaluation evaluate(std::int64_t length, std::int64_t sequences,
                      EvalPositions positions = EvalPositions::as_trained);
  /// The same on another task's held-out set: a variant of the task the model was trained on
  /// (Flip-Flop's sparse and dense test sets are the task with another `ignore`), which must
  /// have the same vocabulary (an ag::Error otherwise).
  Evaluation evaluate(const Task& task, std::int64_t length, std::int64_t sequences,
                      EvalPositions positions = EvalPositions::as_trained);
  /// Trains until config.steps, evaluating every eval_every steps (and at the end).
  void train(const std::function<void(const HistoryPoint&)>& on_eval = {});
  /// train(), stopping once `steps` steps are done (at most config.steps): the live pages
  /// train in slices between which the page stays responsive. Slices give exactly the run
  /// that train() gives.
  void train_until(std::int64_t steps,
                   const std::function<void(const HistoryPoint&)>& on_eval = {});
  /// Calls on_step after each step with (step, loss), for progress displays.
  std::function<void(std::int64_t, double)> on_step;
  /// Called by train() after each step and its evaluation, when the state is complete enough
  /// to save (run_training's periodic checkpoints).
  std::function<void()> after_step;
  /// How often run_training saves this run (steps; 0: only at the end). Kept in the
  /// checkpoint, so that a resumed run saves as often as the run it continues.
  std::int64_t save_every = 500;
  /// How the run came to be, as run_training records it (JSON text: its segments, fine-tune
  /// and resume sources; lab/run.cpp). Kept in the checkpoint so that a resumed run keeps its
  /// history; the trainer itself never reads it.
  std::string lineage;

  /// Writes model, optimiser state, data stream and history to `checkpoint` (atomically).
  void save(const std::string& checkpoint) const;
  /// Sets the run's total number of steps (at least the steps done). The learning-rate
  /// schedule follows the new total, so only an unchanged total continues exactly.
  void extend_to(std::int64_t total_steps);

  /// The schedule: linear warm-up to lr, then a cosine down to lr / 10 at config.steps.
  double learning_rate(std::int64_t step) const;
  const TrainConfig& config() const { return config_; }    ///< as validated
  Decoder& model() { return *model_; }                     ///< the model being trained
  const Task& task() const { return *task_; }              ///< the task it is trained on
  std::int64_t steps_done() const { return steps_done_; }  ///< steps taken so far
  const std::vector<HistoryPoint>& history() const { return history_; }  ///< every evaluation
  double seconds() const { return seconds_; }  ///< time spent in step() so far

 private:
  /// The public constructor with the task already made (resume checks the task against the
  /// checkpoint before the model is built). `will_train`: the memory a training step needs is
  /// checked (load(), for evaluation and generation, leaves that to the command's own estimate).
  Trainer(TrainConfig config, std::unique_ptr<Task> task, bool will_train = true);
  /// resume() and load(): `allowed` is how much of the task's source may have changed.
  static std::unique_ptr<Trainer> read_back(const std::string& checkpoint,
                                            const std::map<std::string, std::string>& options,
                                            SourceChange allowed);

  TrainConfig config_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<Decoder> model_;
  std::unique_ptr<ag::AdamW> optimizer_;
  ag::Rng data_rng_;
  std::int64_t steps_done_ = 0;
  std::vector<HistoryPoint> history_;
  double seconds_ = 0;
};

/// The configuration as JSON (nlohmann's to_json/from_json pair, so `json(config)` and
/// `j.get<TrainConfig>()` work): one key per field, the model's fields at the top level.
/// Reading keeps the default of a missing key; an unknown key or a value of the wrong type is
/// an ag::Error. Reading does not validate: config_from_json does.
void to_json(nlohmann::json& j, const TrainConfig& config);
/// Reads what to_json wrote (see above): missing keys keep their defaults.
void from_json(const nlohmann::json& j, TrainConfig& config);

/// The configuration as JSON text, and back (then validated).
std::string config_to_json(const TrainConfig& config);
/// Parses and validates; any mistake is an ag::Error.
TrainConfig config_from_json(const std::string& text);

/// The mean cross-entropy of logits [B, T, V] against targets [B, T] (kIgnore skipped).
ag::Tensor sequence_loss(const ag::Tensor& logits, const ag::Indices& targets);

}  // namespace pe
