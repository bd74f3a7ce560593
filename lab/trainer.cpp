#include "lab/trainer.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <type_traits>

#include "ag/io.hpp"
#include "ag/micro_batches.hpp"
#include "ag/numbers.hpp"
#include "ag/profile.hpp"
#include "lab/memory.hpp"

namespace pe {

namespace {
// Named Rng streams: the same seed gives the same initial weights whatever the data, and
// training batches never overlap the held-out set (Task::kHeldOutStream).
constexpr std::uint64_t kInitStream = 1, kDataStream = 2;
constexpr const char* kOptimizerPrefix = "optimizer.";
}  // namespace

void TrainConfig::validate() const {
  auto in_range = [](const char* field, std::int64_t value, Range range) {
    ag::check(value >= range.low && value <= range.high, "TrainConfig", field, " must be from ",
              range.low, " to ", range.high, ", got ", value);
  };
  in_range("length", length, limits::length);
  in_range("batch", batch, limits::batch);
  in_range("width", model.width, limits::width);
  in_range("heads", model.heads, limits::heads);
  in_range("layers", model.layers, limits::layers);
  in_range("ffn_width", model.ffn_width, limits::ffn_width);
  in_range("eval_every", eval_every, limits::eval_every);
  in_range("eval_sequences", eval_sequences, limits::eval_sequences);
  in_range("steps", steps, limits::steps);
  in_range("warmup", warmup, limits::warmup);
  in_range("max_length", max_length, limits::max_length);
  in_range("random_positions", random_positions, limits::random_positions);
  // An infinite rate or norm would train on in NaN; a NaN fails every comparison.
  ag::check(std::isfinite(lr) && lr > 0, "TrainConfig", "lr must be a finite positive number, got ",
            lr);
  ag::check(std::isfinite(clip) && clip > 0, "TrainConfig",
            "clip must be a finite positive number, got ", clip);
  ag::check(std::isfinite(weight_decay) && weight_decay >= 0, "TrainConfig",
            "weight_decay must be a finite number, not negative, got ", weight_decay);
  ag::check(model.width % model.heads == 0, "TrainConfig", "width ", model.width,
            " is not divisible by heads ", model.heads);
  ag::check(max_length == 0 || max_length >= length, "TrainConfig", "max_length ", max_length,
            " is shorter than the training length ", length);
  ag::check(random_positions == 0 || random_positions >= length, "TrainConfig",
            "random_positions (L_max) ", random_positions, " is shorter than the training length ",
            length, ": a sequence needs that many distinct positions");
}

std::int64_t TrainConfig::table_length() const {
  return std::max(max_length > 0 ? max_length : length, random_positions);
}

namespace {

// The model of a configuration whose vocab is set, its weights drawn from `init`.
std::unique_ptr<Decoder> build_model(const TrainConfig& config, ag::Rng& init) {
  EncodingSpec spec;
  spec.model = config.model;
  spec.max_length = config.table_length();
  spec.options = config.encoding_options;
  return std::make_unique<Decoder>(config.model, make_encoding(config.encoding, spec, init), init);
}

// Encoding options as the command line writes them: "-o max_len=16 -o base=10".
std::string option_flags(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [key, value] : options)
    out += (out.empty() ? "-o " : " -o ") + key + "=" + value;
  return out;
}

// The training length against the task, whose options set the shortest sequence it can make
// (ShiftK's k = 32 needs 33 tokens): the mistake is --length against --task-option, and the
// message names both. Then the task's own rules (an odd length for a task of pairs), so that
// they fail here and not at step 1.
void check_training_length(const Task& task, const TrainConfig& config) {
  if (config.length < task.min_length()) {
    std::string options;
    for (const auto& [key, value] : config.task_options)
      options += (options.empty() ? " with --task-option " : " --task-option ") + key + "=" + value;
    throw ag::Error("train: task " + task.name() + " cannot make sequences of length " +
                    std::to_string(config.length) + " (--length): it needs at least " +
                    std::to_string(task.min_length()) + " tokens" + options + "; give --length " +
                    std::to_string(task.min_length()) + " or more, or change --task-option");
  }
  try {
    task.check_length(config.length);
  } catch (const ag::Error& e) {
    throw ag::Error("train: --length " + std::to_string(config.length) + " does not suit task " +
                    task.name() + " (" + e.what() + ")");
  }
}

// One forward pass of a sequence at the training length and at the positions training uses
// (randomized ones reach L_max - 1): an encoding option that cannot serve them, such as a
// learned table's max_len below --length, is refused here, naming the options, rather than
// at the first training step as a training failure.
void check_reaches_training_length(Decoder& model, const TrainConfig& config) {
  ag::NoGradGuard no_grad;
  const ag::Indices ids{std::vector<std::int64_t>(static_cast<std::size_t>(config.length), 0),
                        {1, config.length}};
  Positions at = 0;
  if (config.random_positions > 0) {
    std::vector<std::int64_t> last(static_cast<std::size_t>(config.length));
    std::iota(last.begin(), last.end(), config.random_positions - config.length);
    at = Positions(std::move(last));
  }
  try {
    model.forward(ids, at);
  } catch (const ag::Error& e) {
    const std::string options =
        config.encoding_options.empty() ? "" : " with " + option_flags(config.encoding_options);
    const std::string reach =
        config.random_positions > 0
            ? "positions up to --random-positions " + std::to_string(config.random_positions)
            : "sequences of --length " + std::to_string(config.length);
    throw ag::Error("Trainer: --encoding " + config.encoding + options + " cannot read " + reach +
                    " (" + e.what() + "); change the option or the length");
  }
}

}  // namespace

void check_trainable(const TrainConfig& requested) {
  TrainConfig config = requested;
  config.validate();
  const auto task = make_task(config.task, config.task_options);
  check_training_length(*task, config);
  config.model.vocab = task->vocab_size();
  check_memory(config, config.model.vocab);
  ag::Rng rng(config.seed);
  // a name or option it does not know is an error; so is a length it cannot serve
  check_reaches_training_length(*build_model(config, rng), config);
}

Trainer::Trainer(TrainConfig config) : Trainer(std::move(config), nullptr) {}

Trainer::Trainer(TrainConfig config, std::unique_ptr<Task> task, bool will_train)
    : config_(std::move(config)), task_(std::move(task)) {
  config_.validate();
  if (!task_) task_ = make_task(config_.task, config_.task_options);
  check_training_length(*task_, config_);
  config_.model.vocab = task_->vocab_size();
  if (will_train) check_memory(config_, config_.model.vocab);  // before the model exists
  ag::Rng init = ag::Rng(config_.seed).fork(kInitStream);
  model_ = build_model(config_, init);
  check_reaches_training_length(*model_, config_);
  optimizer_ = std::make_unique<ag::AdamW>(model_->parameters(), config_.lr, 0.9, 0.999, 1e-8,
                                           config_.weight_decay);
  data_rng_ = ag::Rng(config_.seed).fork(kDataStream);
}

double Trainer::learning_rate(std::int64_t step) const {
  if (step < config_.warmup) return config_.lr * double(step + 1) / double(config_.warmup);
  const double span = double(std::max<std::int64_t>(config_.steps - config_.warmup, 1));
  const double progress = std::min(1.0, double(step - config_.warmup) / span);
  return config_.lr * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * progress)));
}

ag::Tensor sequence_loss(const ag::Tensor& logits, const ag::Indices& targets) {
  const std::int64_t V = logits.size(-1);
  return ag::cross_entropy(ag::reshape(logits, {-1, V}),
                           {targets.values, {static_cast<std::int64_t>(targets.values.size())}},
                           kIgnore);
}

// [train-step]
double Trainer::step() {
  const auto start = std::chrono::steady_clock::now();
  const Batch batch = task_->sample(config_.batch, config_.length, data_rng_);
  // Randomized positions: one sorted draw per step from the data stream, whose state the
  // checkpoint keeps, so that a resumed run draws what the uninterrupted one would have.
  const Positions at = config_.random_positions > 0
                           ? random_positions(config_.length, config_.random_positions, data_rng_)
                           : Positions(0);
  optimizer_->lr = learning_rate(steps_done_);
  optimizer_->zero_grad();
  // The batch in a fixed number of micro-batches (ag/micro_batches.hpp), each on a thread of
  // its own when there are threads; the loss is the mean over every scored target of the
  // batch, so each micro-batch's mean weighs by its share of them.
  const std::int64_t B = batch.inputs.shape[0];
  const std::int64_t pieces = ag::micro_batch_count(B, batch.inputs.shape[1]);
  const auto scored = [&](const ag::Indices& targets) {
    return std::count_if(targets.values.begin(), targets.values.end(),
                         [](std::int64_t t) { return t != kIgnore; });
  };
  const double all_scored = double(scored(batch.targets));
  ag::check(all_scored > 0, "train", "a training batch of ", config_.task, " has no scored target");
  const double value = ag::accumulate_micro_batches(pieces, [&](std::int64_t i) {
    const ag::MicroBatchRows rows = ag::micro_batch_rows(B, pieces, i);
    const ag::Indices inputs = ag::rows_of(batch.inputs, rows);
    const ag::Indices targets = ag::rows_of(batch.targets, rows);
    const double share = double(scored(targets)) / all_scored;
    if (share == 0) return ag::WeightedLoss{};  // nothing to learn from here
    return ag::WeightedLoss{sequence_loss(model_->forward(inputs, at), targets), share};
  });
  ag::check(std::isfinite(value), "train", "training diverged at step ", steps_done_ + 1,
            ": the loss is ", value, " (a smaller --lr or --clip may help)");
  const double norm = ag::clip_grad_norm(model_->parameters(), config_.clip);
  ag::check(std::isfinite(norm), "train", "training diverged at step ", steps_done_ + 1,
            ": the gradient norm is ", norm, " (a smaller --lr or --clip may help)");
  optimizer_->step();
  ++steps_done_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (on_step) on_step(steps_done_, value);
  return value;
}
// [train-step]

Evaluation Trainer::evaluate(std::int64_t length, std::int64_t sequences, EvalPositions positions) {
  return evaluate(*task_, length, sequences, positions);
}

Evaluation Trainer::evaluate(const Task& task, std::int64_t length, std::int64_t sequences,
                             EvalPositions positions) {
  ag::check(task.vocab_size() == task_->vocab_size(), "evaluate", "task ", task.name(), " has ",
            task.vocab_size(), " tokens but the model was trained on ", task_->name(), " with ",
            task_->vocab_size());
  // One row in a profile: held-out evaluation is not part of a training step.
  ag::profile::Scope profile_scope("evaluate", ag::profile::Phase::other);
  ag::NoGradGuard no_grad;
  const Batch batch = task.held_out(sequences, length, config_.seed);
  // Ruoss et al.'s convention for a model trained at randomized positions: evaluated at
  // positions drawn likewise, from a fixed seed, one sorted set per forward call.
  const std::int64_t max_positions =
      positions == EvalPositions::as_trained ? config_.random_positions : 0;
  ag::Rng position_rng(kEvaluationPositionsSeed);
  Evaluation result;
  const std::int64_t chunk = 64;  // bounded memory at any length
  double loss_sum = 0;
  for (std::int64_t first = 0; first < sequences; first += chunk) {
    const ag::MicroBatchRows chunk_rows{first, std::min(first + chunk, sequences)};
    const ag::Indices inputs = ag::rows_of(batch.inputs, chunk_rows);
    const ag::Indices targets = ag::rows_of(batch.targets, chunk_rows);
    ag::Tensor logits =  // [rows, length, V]
        model_->forward(inputs, evaluation_positions(length, max_positions, position_rng));
    const std::int64_t V = logits.size(-1);
    const std::vector<double> values = logits.to_vector();
    std::int64_t scored = 0;
    for (std::size_t i = 0; i < targets.values.size(); ++i) {
      if (targets.values[i] == kIgnore) continue;
      const double* row = values.data() + i * V;
      const auto best = std::max_element(row, row + V) - row;
      result.accuracy += best == targets.values[i] ? 1.0 : 0.0;
      ++scored;
    }
    if (scored > 0) loss_sum += sequence_loss(logits, targets).item() * double(scored);
    result.scored += scored;
  }
  ag::check(result.scored > 0, "evaluate", "no scored positions at length ", length);
  result.accuracy /= double(result.scored);
  result.loss = loss_sum / double(result.scored);
  return result;
}

void Trainer::train(const std::function<void(const HistoryPoint&)>& on_eval) {
  train_until(config_.steps, on_eval);
}

void Trainer::train_until(std::int64_t steps,
                          const std::function<void(const HistoryPoint&)>& on_eval) {
  const std::int64_t last = std::min(steps, config_.steps);
  double recent_loss = 0;
  while (steps_done_ < last) {
    recent_loss = step();
    if (steps_done_ % config_.eval_every == 0 || steps_done_ == config_.steps) {
      const Evaluation eval = evaluate(config_.length, config_.eval_sequences);
      history_.push_back({steps_done_, recent_loss, learning_rate(steps_done_ - 1), eval.accuracy,
                          eval.loss, seconds_});
      if (on_eval) on_eval(history_.back());
    }
    if (after_step) after_step();
  }
}

namespace {

// A checkpoint's "task_source": the corpus file, its characters as byte values in token
// order, the text's length and its FNV-1a hash in 16 hex digits.
std::string task_source_json(const TaskSource& source) {
  std::vector<int> characters;
  for (const char c : source.characters) characters.push_back(static_cast<unsigned char>(c));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(source.text_hash));
  return nlohmann::json{{"file", source.file},
                        {"characters", characters},
                        {"text_bytes", source.text_bytes},
                        {"text_fnv1a", hash}}
      .dump();
}

}  // namespace

void Trainer::save(const std::string& checkpoint) const {
  ag::NamedTensors tensors = model_->named_parameters();
  const auto state = optimizer_->state();
  for (std::size_t i = 0; i < state.m.size(); ++i) {
    tensors.emplace_back(kOptimizerPrefix + std::to_string(i) + ".m", state.m[i]);
    tensors.emplace_back(kOptimizerPrefix + std::to_string(i) + ".v", state.v[i]);
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& h : history_)
    history.push_back({h.step, h.train_loss, h.lr, h.eval_accuracy, h.eval_loss, h.seconds});
  ag::Metadata metadata{{"config", config_to_json(config_)},
                        {"steps_done", std::to_string(steps_done_)},
                        {"optimizer_steps", std::to_string(state.t)},
                        {"data_rng", data_rng_.save_state()},
                        {"history", history.dump()},
                        {"seconds", std::to_string(seconds_)},
                        {"save_every", std::to_string(save_every)}};
  if (const auto source = task_->source()) metadata["task_source"] = task_source_json(*source);
  if (!lineage.empty()) metadata["lineage"] = lineage;
  ag::save_tensors(checkpoint, tensors, metadata);
}

namespace {

// Whole-string numbers: "7x" and "1e5" are not integers, "" and " 3" are nothing.
std::int64_t whole_integer(const std::string& text, const std::string& where, const char* key) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  ag::check(error == std::errc() && end == text.data() + text.size(), "Trainer::resume", "'", where,
            "': ", key, " must be a whole number, got '", text.substr(0, 40), "'");
  return value;
}

double finite_number(const std::string& text, const std::string& where, const char* key) {
  double value = 0;
  ag::check(ag::parse_double(text, value) && std::isfinite(value), "Trainer::resume", "'", where,
            "': ", key, " must be a finite number, got '", text.substr(0, 40), "'");
  return value;
}

// What task_source_json wrote, read strictly: characters are distinct bytes in increasing
// order (as charlm numbers them), the hash is 16 hex digits.
TaskSource task_source(const std::string& text, const std::string& where) {
  auto fail = [&](const std::string& why) -> TaskSource {
    throw ag::Error("Trainer::resume: '" + where + "': task_source " + why);
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return fail("is not valid JSON");
  }
  if (!j.is_object() || j.size() != 4 || !j.contains("file") || !j["file"].is_string() ||
      !j.contains("characters") || !j["characters"].is_array() || !j.contains("text_bytes") ||
      !j["text_bytes"].is_number_unsigned() || !j.contains("text_fnv1a") ||
      !j["text_fnv1a"].is_string())
    return fail("is not {file, characters, text_bytes, text_fnv1a}");
  TaskSource source;
  source.file = j["file"].get<std::string>();
  source.text_bytes = j["text_bytes"].get<std::uint64_t>();
  int previous = -1;
  for (const auto& c : j["characters"]) {
    if (!c.is_number_unsigned() || c.get<std::uint64_t>() > 255 || int(c.get<int>()) <= previous)
      return fail("characters are not distinct bytes in increasing order");
    previous = c.get<int>();
    source.characters.push_back(static_cast<char>(previous));
  }
  if (source.characters.empty()) return fail("has no characters");
  const std::string hash = j["text_fnv1a"].get<std::string>();
  const auto [end, error] =
      std::from_chars(hash.data(), hash.data() + hash.size(), source.text_hash, 16);
  if (hash.size() != 16 || error != std::errc() || end != hash.data() + hash.size())
    return fail("text_fnv1a is not 16 hex digits");
  return source;
}

// One saved evaluation: [step, train_loss, lr, eval_accuracy, eval_loss, seconds].
HistoryPoint history_point(const nlohmann::json& entry, std::size_t index,
                           const std::string& where) {
  auto fail = [&](const std::string& why) {
    throw ag::Error("Trainer::resume: '" + where + "': history entry " + std::to_string(index) +
                    " " + why);
  };
  if (!entry.is_array() || entry.size() != 6) fail("is not a list of 6 numbers");
  for (const auto& value : entry)
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      fail("holds a value that is not a finite number");
  if (!entry[0].is_number_integer()) fail("has a step that is not a whole number");
  return {entry[0].get<std::int64_t>(), entry[1].get<double>(), entry[2].get<double>(),
          entry[3].get<double>(),       entry[4].get<double>(), entry[5].get<double>()};
}

}  // namespace

SavedProgress read_saved_progress(const std::map<std::string, std::string>& metadata,
                                  const std::string& where) {
  for (const char* key : {"config", "steps_done", "optimizer_steps", "data_rng", "history"})
    ag::check(metadata.count(key) == 1, "Trainer::resume", "'", where,
              "' is not a training checkpoint (no '", key, "')");
  SavedProgress saved;
  saved.config = config_from_json(metadata.at("config"));
  saved.steps_done = whole_integer(metadata.at("steps_done"), where, "steps_done");
  ag::check(saved.steps_done >= 0 && saved.steps_done <= saved.config.steps, "Trainer::resume", "'",
            where, "': steps_done ", saved.steps_done, " is outside 0 .. ", saved.config.steps,
            " (the run's steps)");
  saved.optimizer_steps = whole_integer(metadata.at("optimizer_steps"), where, "optimizer_steps");
  ag::check(saved.optimizer_steps == saved.steps_done, "Trainer::resume", "'", where,
            "': optimizer_steps ", saved.optimizer_steps, " differs from steps_done ",
            saved.steps_done);
  saved.data_rng = metadata.at("data_rng");
  if (metadata.count("save_every")) {  // absent from checkpoints of older versions
    saved.save_every = whole_integer(metadata.at("save_every"), where, "save_every");
    ag::check(
        saved.save_every >= limits::save_every.low && saved.save_every <= limits::save_every.high,
        "Trainer::resume", "'", where, "': save_every ", saved.save_every, " is outside ",
        limits::save_every.low, " .. ", limits::save_every.high);
  }
  if (metadata.count("lineage")) saved.lineage = metadata.at("lineage");  // run.cpp reads it
  if (metadata.count("seconds")) {
    saved.seconds = finite_number(metadata.at("seconds"), where, "seconds");
    ag::check(saved.seconds >= 0, "Trainer::resume", "'", where, "': seconds is negative");
  }
  if (metadata.count("task_source"))  // absent from checkpoints of older versions
    saved.task_source = task_source(metadata.at("task_source"), where);
  nlohmann::json history;
  try {
    history = nlohmann::json::parse(metadata.at("history"));
  } catch (const nlohmann::json::exception&) {
    throw ag::Error("Trainer::resume: '" + where + "': history is not valid JSON");
  }
  ag::check(history.is_array(), "Trainer::resume", "'", where, "': history is not a list");
  for (std::size_t i = 0; i < history.size(); ++i) {
    const HistoryPoint point = history_point(history[i], i, where);
    const std::int64_t previous = saved.history.empty() ? 0 : saved.history.back().step;
    ag::check(point.step > previous && point.step <= saved.steps_done, "Trainer::resume", "'",
              where, "': history entry ", i, " has step ", point.step, ", not from ", previous + 1,
              " to steps_done ", saved.steps_done);
    saved.history.push_back(point);
  }
  return saved;
}

namespace {

// A checkpoint whose checksum holds can still carry NaN weights (a crafted file, or one saved
// by a version that did not stop a diverging run): evaluating it would print "loss nan".
void check_finite(const ag::NamedTensors& tensors, const std::string& where) {
  for (const auto& [name, tensor] : tensors) {
    const std::vector<double> values = tensor.to_vector();
    for (std::size_t i = 0; i < values.size(); ++i)
      ag::check(std::isfinite(values[i]), "Trainer::resume", "'", where, "': tensor '", name,
                "' holds ", values[i], " at index ", i,
                "; a model with weights that are not "
                "finite numbers cannot be used");
  }
}

}  // namespace

namespace {

// The parameter shapes of a model, by name.
std::map<std::string, ag::Shape> parameter_shapes(const Decoder& model) {
  std::map<std::string, ag::Shape> shapes;
  for (const auto& [name, tensor] : model.named_parameters()) shapes[name] = tensor.shape();
  return shapes;
}

// Applies --option key=value over a checkpoint's options ("key=" removes one).
void apply_option(TrainConfig& config, const std::string& key, const std::string& value) {
  if (value.empty())
    config.encoding_options.erase(key);
  else
    config.encoding_options[key] = value;
}

// An encoding option given over a checkpoint (pe eval -o ...) may change a rule (RoPE's
// scaling), never a parameter's shape (a learned table's max_len): the trained weights would
// not fit. Each option is tried alone on the trained configuration, and the first that
// changes a shape is named, before any model is built from the checkpoint's weights. An
// option the encoding does not know is left for the Trainer to refuse as it would anyway.
void check_options_keep_shapes(const TrainConfig& trained,
                               const std::map<std::string, std::string>& options,
                               const std::string& checkpoint) {
  TrainConfig base = trained;
  base.model.vocab = 1;  // the vocabulary takes no part; a small model is built quicker
  ag::Rng rng(0);
  const auto shapes = parameter_shapes(*build_model(base, rng));
  for (const auto& [key, value] : options) {
    TrainConfig with = base;
    apply_option(with, key, value);
    std::map<std::string, ag::Shape> changed;
    try {
      changed = parameter_shapes(*build_model(with, rng));
    } catch (const ag::Error&) {
      continue;
    }
    for (const auto& [name, shape] : shapes) {
      const auto found = changed.find(name);
      if (found != changed.end() && found->second == shape) continue;
      const auto was = trained.encoding_options.find(key);
      const std::string trained_with = was == trained.encoding_options.end()
                                           ? "without " + key
                                           : "with " + key + "=" + was->second;
      const std::string now = found == changed.end() ? "gone" : ag::shape_string(found->second);
      throw ag::Error("Trainer::resume: --option " + key + "=" + value +
                      " would change the model's parameter '" + name + "' from " +
                      ag::shape_string(shape) + " to " + now + ": an option that sizes a " +
                      "parameter cannot change after training ('" + checkpoint + "' was trained " +
                      trained_with + "); leave it out");
    }
  }
}

// The task read again must make the tokens the model learned: the same characters of a
// charlm corpus (and with SourceChange::none the same text), or at least as many tokens for
// a checkpoint of an older version, which keeps only their number.
void check_task_matches(const Task& task, const SavedProgress& saved, SourceChange allowed,
                        const std::string& where, const std::string& fix) {
  if (saved.task_source) check_same_source(task, *saved.task_source, allowed, fix);
  ag::check(task.vocab_size() == saved.config.model.vocab, "Trainer::resume", "'", where,
            "' holds a model of ", saved.config.model.vocab, " tokens, but ", task.description(),
            " makes ", task.vocab_size(), "; ", fix);
}

}  // namespace

std::unique_ptr<Trainer> Trainer::resume(
    const std::string& checkpoint, const std::map<std::string, std::string>& encoding_options) {
  return read_back(checkpoint, encoding_options, SourceChange::none);
}

std::unique_ptr<Trainer> Trainer::load(const std::string& checkpoint,
                                       const std::map<std::string, std::string>& encoding_options) {
  return read_back(checkpoint, encoding_options, SourceChange::text_only);
}

std::unique_ptr<Trainer> Trainer::read_back(
    const std::string& checkpoint, const std::map<std::string, std::string>& encoding_options,
    SourceChange allowed) {
  const ag::TensorFile file = ag::load_tensor_file(checkpoint);
  SavedProgress saved = read_saved_progress(file.metadata, checkpoint);
  check_finite(file.tensors, checkpoint);
  auto task = make_task(saved.config.task, saved.config.task_options);
  const std::string file_name =
      saved.task_source ? "'" + saved.task_source->file + "'" : "the corpus";
  check_task_matches(*task, saved, allowed, checkpoint,
                     allowed == SourceChange::none
                         ? "put back the text the run was trained on at " + file_name +
                               ", or start a new run on this one"
                         : "put back the text the model was trained on at " + file_name +
                               ", or train a new model on this one");
  if (!encoding_options.empty())
    check_options_keep_shapes(saved.config, encoding_options, checkpoint);
  TrainConfig config = saved.config;
  for (const auto& [key, value] : encoding_options) {
    if (!value.empty()) {
      apply_option(config, key, value);
      continue;
    }
    // "key=" removes an option: one the checkpoint does not have is a typing mistake.
    std::string set;
    for (const auto& [name, v] : config.encoding_options) set += (set.empty() ? "" : ", ") + name;
    ag::check(config.encoding_options.erase(key) == 1, "Trainer::resume", "--option ", key,
              "= removes an encoding option, but '", checkpoint, "' has no option '", key,
              "' (its options: ", set.empty() ? "none" : set, ")");
  }
  const ag::Rng data_rng = ag::Rng::from_state(saved.data_rng);
  // A model loaded for use (load: eval, generate, heatmap, export) is checked by the estimate
  // of that work, not of a training step it will not take.
  std::unique_ptr<Trainer> trainer(
      new Trainer(config, std::move(task), allowed == SourceChange::none));
  ag::load_module(file.tensors, trainer->model(), checkpoint, kOptimizerPrefix);
  std::map<std::string, ag::Tensor> by_name(file.tensors.begin(), file.tensors.end());
  ag::Adam::State state;
  state.t = saved.optimizer_steps;
  const std::size_t count = trainer->model().parameters().size();
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = kOptimizerPrefix + std::to_string(i);
    ag::check(by_name.count(name + ".m") && by_name.count(name + ".v"), "Trainer::resume", "'",
              checkpoint, "' lacks the optimiser state of parameter ", i);
    state.m.push_back(by_name.at(name + ".m"));
    state.v.push_back(by_name.at(name + ".v"));
  }
  trainer->optimizer_->set_state(state);
  trainer->steps_done_ = saved.steps_done;
  trainer->data_rng_ = data_rng;
  trainer->seconds_ = saved.seconds;
  trainer->history_ = std::move(saved.history);
  if (saved.save_every >= 0) trainer->save_every = saved.save_every;
  trainer->lineage = saved.lineage;
  return trainer;
}

void Trainer::load_weights(const std::string& checkpoint) {
  const ag::TensorFile file = ag::load_tensor_file(checkpoint);
  // a training checkpoint, not any tensor file
  const SavedProgress saved = read_saved_progress(file.metadata, checkpoint);
  check_finite(file.tensors, checkpoint);
  check_task_matches(*task_, saved, SourceChange::text_only, checkpoint,
                     "--init needs a model trained on the same tokens: train without --init, "
                     "or give --task-option corpus= a text of the same characters");
  ag::load_module(file.tensors, *model_, checkpoint, kOptimizerPrefix);
}

void Trainer::extend_to(std::int64_t total_steps) {
  ag::check(total_steps >= steps_done_, "Trainer", "cannot train to ", total_steps,
            " steps: the run has done ", steps_done_, " already");
  config_.steps = total_steps;
}

namespace {

// Every field of TrainConfig with its JSON key, in one place: writing, reading and the check
// for unknown keys all go through this list, so that a new field is one new line. The model's
// fields stand at the top level, as in every run.json and checkpoint written so far.
template <class Config, class Visit>
void for_each_field(Config& c, Visit&& visit) {
  visit("task", c.task);
  visit("task_options", c.task_options);
  visit("encoding", c.encoding);
  visit("encoding_options", c.encoding_options);
  visit("vocab", c.model.vocab);
  visit("width", c.model.width);
  visit("heads", c.model.heads);
  visit("layers", c.model.layers);
  visit("ffn_width", c.model.ffn_width);
  visit("causal", c.model.causal);
  visit("length", c.length);
  visit("batch", c.batch);
  visit("steps", c.steps);
  visit("warmup", c.warmup);
  visit("lr", c.lr);
  visit("weight_decay", c.weight_decay);
  visit("clip", c.clip);
  visit("seed", c.seed);
  visit("eval_every", c.eval_every);
  visit("eval_sequences", c.eval_sequences);
  visit("max_length", c.max_length);
  visit("random_positions", c.random_positions);
  visit("sink_logits", c.model.sink_logits);
}

}  // namespace

void to_json(nlohmann::json& j, const TrainConfig& c) {
  j = nlohmann::json::object();
  for_each_field(c, [&](const char* key, const auto& value) { j[key] = value; });
  // Written only when on, so that every run saved before the option existed keeps the
  // configuration it had (and is still found and reused by it).
  if (c.random_positions == 0) j.erase("random_positions");
  if (!c.model.sink_logits) j.erase("sink_logits");
}

void from_json(const nlohmann::json& j, TrainConfig& c) {
  ag::check(j.is_object(), "TrainConfig", "expected a JSON object, got ", j.type_name());
  std::size_t known = 0;
  try {
    for_each_field(c, [&](const char* key, auto& value) {
      if (const auto it = j.find(key); it != j.end()) {
        using T = std::decay_t<decltype(value)>;
        // nlohmann would turn 1.5 into 1 and -5 into 2^64 - 5: only the exact type is read.
        if constexpr (std::is_same_v<T, bool>)
          ag::check(it->is_boolean(), "TrainConfig", key, " must be true or false, got ",
                    it->dump());
        else if constexpr (std::is_unsigned_v<T>)
          ag::check(it->is_number_unsigned(), "TrainConfig", key,
                    " must be a whole number, not negative, got ", it->dump());
        else if constexpr (std::is_integral_v<T>)
          ag::check(it->is_number_integer(), "TrainConfig", key, " must be a whole number, got ",
                    it->dump());
        it->get_to(value);
        ++known;
      }
    });
  } catch (const nlohmann::json::exception& e) {
    throw ag::Error(std::string("TrainConfig: a value has the wrong type (") + e.what() + ")");
  }
  if (known == j.size()) return;  // a missing key keeps its default
  const TrainConfig defaults;
  for (const auto& item : j.items()) {  // not a structured binding: clang 14 cannot capture one
    const std::string& key = item.key();
    bool found = false;
    for_each_field(defaults, [&](const char* name, const auto&) { found = found || key == name; });
    ag::check(found, "TrainConfig", "unknown key '", key, "'");
  }
}

std::string config_to_json(const TrainConfig& config) { return nlohmann::json(config).dump(2); }

TrainConfig config_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ag::Error(std::string("config_from_json: not valid JSON (") + e.what() + ")");
  }
  TrainConfig config = j.get<TrainConfig>();
  config.validate();
  return config;
}

}  // namespace pe
