#include "programs/pe/commands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/command_line.hpp"
#include "base/option_files.hpp"
#include "base/program_frame.hpp"
#include "lab/figures.hpp"
#include "lab/inspect.hpp"
#include "lab/memory.hpp"
#include "lab/run.hpp"
#include "lab/table.hpp"
#if PE_HAS_CHAPTER_8
#include "chapters/08-length/lengths.hpp"
#endif
#if PE_HAS_CHAPTER_11
#include "chapters/11-todays-models/hf_config.hpp"
#endif
#if PE_HAS_CHAPTER_12
#include "chapters/12-inference/window_cache.hpp"
#endif

namespace pe {

std::map<std::string, std::string> parse_pairs(const std::vector<std::string>& pairs,
                                               const char* flag) {
  std::map<std::string, std::string> out;
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(std::string(flag) + " expects key=value, got '" + pair + "'");
    // A repeated key kept the last value silently, while a repeated --steps is refused.
    const auto [at, added] = out.emplace(pair.substr(0, eq), pair.substr(eq + 1));
    if (!added)
      throw UsageError(std::string(flag) + " " + at->first + " was given twice ('" + at->second +
                       "', then '" + pair.substr(eq + 1) + "'); give it once");
  }
  return out;
}

namespace {

std::string default_run_name(const TrainConfig& c) {
  return c.encoding + "-" + c.task + "-l" + std::to_string(c.model.layers) + "-h" +
         std::to_string(c.model.heads) + "-s" + std::to_string(c.seed);
}

// A whole-number option within one of TrainConfig's ranges (trainer.hpp's limits).
CLI::Validator within(Range range) { return whole_number<std::int64_t>(range.low, range.high); }

// Any seed: every 64-bit value, nothing that would wrap into one.
const CLI::Validator kSeed = whole_number<std::uint64_t>(0);

// The options every command that builds a model shares; defaults are the reference run.
struct TrainFlags {
  TrainConfig config;
  std::vector<std::string> encoding_options, task_options;
  std::vector<std::int64_t> eval_lengths;
  std::string out, resume, init;
  std::int64_t save_every = 500;
  bool no_figures = false, quiet = false, profile = false, overwrite = false;
};

// The options that make up a TrainConfig. Each number is checked as written against the bounds
// TrainConfig::validate uses (trainer.hpp's limits), and validate then checks the whole
// (finish_config), as it checks a configuration read from a file. Returns every option but
// --steps: what a resumed run takes from its checkpoint instead.
std::vector<CLI::Option*> add_model_options(CLI::App& cmd, TrainFlags& f) {
  TrainConfig& c = f.config;
  namespace L = limits;
  cmd.add_option("--steps", c.steps, "optimisation steps (with --resume: the new total)")
      ->capture_default_str()
      ->check(within(L::steps));
  const auto add = [&](const char* name, auto& value, const char* help, CLI::Validator check) {
    return cmd.add_option(name, value, help)->capture_default_str()->check(check);
  };
  return {
      add("--encoding,-e", c.encoding, "positional encoding (see pe list)", not_empty("a name")),
      add("--task,-t", c.task, "task (see pe list)", not_empty("a name")),
      add("--layers", c.model.layers, "decoder blocks", within(L::layers)),
      add("--heads", c.model.heads, "attention heads", within(L::heads)),
      add("--width", c.model.width, "model width C", within(L::width)),
      add("--ffn", c.model.ffn_width, "feed-forward width", within(L::ffn_width)),
      add("--length", c.length, "training sequence length T", within(L::length)),
      add("--batch", c.batch, "sequences per step B", within(L::batch)),
      add("--warmup", c.warmup, "linear warm-up steps", within(L::warmup)),
      add("--lr", c.lr, "peak learning rate", real_number(0, INFINITY, true)),
      add("--weight-decay", c.weight_decay, "AdamW weight decay", real_number(0)),
      add("--clip", c.clip, "max gradient norm", real_number(0, INFINITY, true)),
      add("--seed", c.seed, "random seed (weights and data)", kSeed),
      add("--eval-every", c.eval_every, "steps between evaluations", within(L::eval_every)),
      add("--eval-sequences", c.eval_sequences, "held-out sequences", within(L::eval_sequences)),
      add("--max-length", c.max_length, "longest length the encoding must handle (0: --length)",
          within(L::max_length)),
      add("--random-positions", c.random_positions,
          "L_MAX: train at randomized positions (Ruoss et al. 2023), each step's sorted and "
          "distinct, drawn from 0 .. L_MAX-1 (at least --length; 0: off, positions 0 .. T-1). "
          "The model is then evaluated at positions drawn likewise with a fixed seed (pe eval "
          "--contiguous for 0 .. T-1); a learned table gets L_MAX rows",
          within(L::random_positions)),
      cmd.add_flag("--sink-logits", c.model.sink_logits,
                   "one learned sink logit per head in every attention layer (chapter 12: a "
                   "head may attend to nothing)"),
      cmd.add_option("--option,-o", f.encoding_options, "encoding option key=value (repeatable)"),
      cmd.add_option("--task-option", f.task_options, "task option key=value (repeatable)")};
}

// An --out that is given must name a folder: "" is a mistake, not the default folder.
CLI::Option* add_out_option(CLI::App& cmd, std::string& out, const std::string& help) {
  return cmd.add_option("--out", out, help)->check(not_empty("a folder"));
}

TrainConfig finish_config(TrainFlags& f) {
  TrainConfig c = f.config;
  c.encoding_options = parse_pairs(f.encoding_options, "--option");
  c.task_options = parse_pairs(f.task_options, "--task-option");
  // Before anything is written; what it refuses is the command line's mistake (exit status 2).
  as_usage_error([&] { check_trainable(c); });
  return c;
}

void print_evaluations(const std::map<std::int64_t, Evaluation>& results) {
  std::printf("%8s  %9s  %8s  %8s\n", "length", "accuracy", "loss", "tokens");
  for (const auto& [length, e] : results)
    std::printf("%8ld  %9.4f  %8.4f  %8ld\n", long(length), e.accuracy, e.loss, long(e.scored));
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "encodings and tasks in this build");
  cmd->callback([] {
    std::printf("encodings:\n");
    for (const auto& entry : registered_encodings()) {
      std::printf("  %-12s chapter %s: %s\n", entry.name.c_str(), entry.chapter.c_str(),
                  entry.description.c_str());
      if (!entry.option_names.empty()) {
        std::string names;
        for (const auto& o : entry.option_names) names += " " + o;
        std::printf("  %-12s options:%s\n", "", names.c_str());
      }
    }
    std::printf("tasks:\n");
    for (const auto& name : task_names())
      std::printf("  %-12s %s\n", name.c_str(), make_task(name)->description().c_str());
  });
}

void add_train_command(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  auto* cmd =
      app.add_subcommand("train", "train one model; writes JSON, CSV, a checkpoint and figures");
  const auto from_checkpoint = add_model_options(*cmd, *flags);
  cmd->add_option("--eval-lengths", flags->eval_lengths,
                  "lengths for the final evaluation (default: --length)")
      ->delimiter(',')
      ->check(within(limits::length));
  add_out_option(*cmd, flags->out,
                 "output folder (default results/<encoding>-<task>-l<layers>-h<heads>-s<seed>)");
  cmd->add_flag("--overwrite", flags->overwrite,
                "replace the run the output folder holds: one of another configuration or "
                "trained otherwise (a fine-tune, a copy, a run whose steps were raised)");
  cmd->add_flag("--no-figures", flags->no_figures, "skip the PNG figures");
  cmd->add_option("--save-every", flags->save_every,
                  "write the checkpoint every N steps during training too (0: only at the end; "
                  "with --resume, default: the resumed run's)")
      ->capture_default_str()
      ->check(within(limits::save_every));
  cmd->add_flag("--quiet,-q", flags->quiet, "no progress output");
  cmd->add_flag("--profile", flags->profile,
                "time every op of the training steps and print where the time went");
  auto* resume = cmd->add_option("--resume", flags->resume,
                                 "continue the run saved in this checkpoint (the configuration "
                                 "comes from it; --steps sets the new total): DIR/checkpoint.agt "
                                 "with --out DIR continues the run in place; --out of another "
                                 "folder continues it there as a copy (that folder must hold no "
                                 "run), leaving DIR as it is")
                     ->check(not_empty("a checkpoint file"))
                     ->check(existing_file());
  for (auto* option : from_checkpoint) resume->excludes(option);  // it would be ignored
  cmd->add_option("--init", flags->init,
                  "start from the weights of this checkpoint (a fine-tune: same model shape; "
                  "new optimiser, schedule and data; run.json records it, so pe table --reuse "
                  "never takes it for a run from scratch)")
      ->check(not_empty("a checkpoint file"))
      ->check(existing_file())
      ->excludes(resume);
  cmd->callback([flags, cmd] {
    TrainConfig config = finish_config(*flags);
    RunOptions options;
    if (!flags->resume.empty()) {
      options.resume_from = flags->resume;
      if (cmd->count("--steps")) options.total_steps = config.steps;
      if (flags->out.empty())
        throw UsageError("train: --resume needs --out (a folder for the continued run)");
    }
    options.out_dir = flags->out.empty() ? "results/" + default_run_name(config) : flags->out;
    options.init_from = flags->init;
    options.eval_lengths = flags->eval_lengths;
    options.progress = !flags->quiet;
    options.figures = !flags->no_figures;
    // A resumed run saves as often as the run it continues, unless told otherwise.
    if (flags->resume.empty() || cmd->count("--save-every")) options.save_every = flags->save_every;
    options.overwrite = flags->overwrite;
    options.profile = flags->profile;
    const RunSummary summary = run_training(config, options);
    if (options.profile) std::printf("%s\n", summary.profile.c_str());
    print_evaluations(summary.final);
    std::printf("trained in %.1f s; results in %s/\n", summary.train_seconds,
                summary.out_dir.c_str());
  });
}

namespace {

// [pe-eval-stream]
// `pe eval --window W`: one held-out text of a charlm model read a character at a time through
// chapter 12's window cache, and its bits per character.
struct StreamFlags {
  std::int64_t sinks = 0, window = 0;
  std::string positions;
};

void add_stream_options(CLI::App* cmd, std::int64_t& window, std::int64_t& sinks,
                        std::string& positions, std::int64_t& characters) {
  auto* window_option =
      cmd->add_option("--window", window,
                      "charlm: read one held-out text of --characters through chapter 12's "
                      "window cache, which keeps the last W characters (and the --sinks first), "
                      "and report bits per character")
          ->check(whole_number<std::int64_t>(1, 1000000));
  for (const char* other : {"--lengths", "--plot", "--sequences", "--contiguous"})
    window_option->excludes(cmd->get_option(other));
  cmd->add_option("--sinks", sinks, "with --window: the first S characters, never evicted")
      ->check(whole_number<std::int64_t>(0, 1000000))
      ->needs(window_option);
  cmd->add_option("--positions", positions,
                  "with --window: where the kept keys sit, cache (their places, StreamingLLM) "
                  "or original (their positions in the text)")
      ->check(CLI::IsMember({"cache", "original"}))
      ->needs(window_option);
  cmd->add_option("--characters", characters,
                  "with --window: the characters of the held-out text to predict (1600)")
      ->check(whole_number<std::int64_t>(1, 1000000))
      ->needs(window_option);
}

void stream_evaluation(Trainer& trainer, const StreamFlags& flags, std::int64_t characters,
                       bool json) {
  ag::check(trainer.config().task == "charlm", "eval",
            "--window streams a text, so it needs a charlm model, got task ",
            trainer.config().task);
#if PE_HAS_CHAPTER_12
  const WindowOptions options{flags.sinks, flags.window, parse_stream_positions(flags.positions)};
  check_window_options(options);
  // one held-out window of the corpus, as pe eval's sequences are drawn, and its last target
  trainer.task().check_length(characters);
  require_memory(estimated_generation_bytes(trainer.config(), trainer.config().model.vocab,
                                            {1, characters, true, flags.window, flags.sinks}),
                 "reading " + std::to_string(characters) + " characters through the window cache");
  const Batch text = trainer.task().held_out(1, characters, trainer.config().seed);
  std::vector<std::int64_t> tokens = text.inputs.values;
  tokens.push_back(text.targets.values.back());
  const std::vector<double> bits = stream_bits(trainer.model(), tokens, options);
  double total = 0;
  for (double b : bits) total += b;
  const double per_character = total / double(bits.size());
  if (json) {
    nlohmann::json out = {{"characters", characters},
                          {"sinks", options.sinks},
                          {"window", options.window},
                          {"positions", stream_positions_name(options.positions)},
                          {"bits_per_character", per_character}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf(
      "%lld held-out characters through a window cache of %lld sinks + %lld (positions "
      "%s): %.4f bits per character\n",
      static_cast<long long>(characters), static_cast<long long>(options.sinks),
      static_cast<long long>(options.window), stream_positions_name(options.positions).c_str(),
      per_character);
#else
  (void)flags, (void)characters, (void)json;
  throw ag::Error("eval: --window needs chapter 12's window cache, which this build lacks");
#endif
}
// [pe-eval-stream]

}  // namespace

void add_eval_command(CLI::App& app) {
  struct Flags {
    std::string checkpoint;
    std::vector<std::int64_t> lengths;
    std::int64_t sequences = 0;
    bool json = false;
    std::string plot;
    std::vector<std::string> options;
    bool contiguous = false;
    std::int64_t window = 0, sinks = 0, characters = 1600;  // chapter 12's stream
    std::string positions = "cache";
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("eval", "accuracy of a trained model at given lengths");
  cmd->add_option("--plot", flags->plot, "also draw accuracy against length into this PNG")
      ->check(not_empty("a PNG file"));
  cmd->add_option("checkpoint", flags->checkpoint, "checkpoint.agt written by pe train")
      ->required()
      ->check(existing_file());
  cmd->add_option("--lengths,-l", flags->lengths,
                  "comma-separated lengths (default: the training length)")
      ->delimiter(',')
      ->check(within(limits::length));
  cmd->add_option("--sequences", flags->sequences,
                  "held-out sequences per length (default: the run's)")
      ->check(within(limits::eval_sequences));
  cmd->add_flag("--json", flags->json, "print JSON instead of a table");
  cmd->add_flag("--contiguous", flags->contiguous,
                "evaluate a model trained with --random-positions at positions 0 .. T-1 "
                "(default: sorted random positions from 0 .. L_MAX-1, drawn with a fixed seed, "
                "as it was trained; a length above L_MAX needs this flag)");
  cmd->add_option("--option,-o", flags->options,
                  "encoding option key=value replacing the checkpoint's (repeatable; key= "
                  "removes one), e.g. -o scaling=yarn for a RoPE model");
  add_stream_options(cmd, flags->window, flags->sinks, flags->positions, flags->characters);
  cmd->callback([flags, cmd] {
    if (!flags->plot.empty())  // a pipe, a device or a link is refused before the evaluation
      as_usage_error([&] { check_figure_destination(flags->plot, "eval --plot"); });
    auto trainer = Trainer::load(flags->checkpoint, parse_pairs(flags->options, "--option"));
    if (cmd->count("--window"))
      return stream_evaluation(*trainer, {flags->sinks, flags->window, flags->positions},
                               flags->characters, flags->json);
    std::vector<std::int64_t> lengths = flags->lengths;
    if (lengths.empty()) lengths.push_back(trainer->config().length);
    const std::int64_t sequences =
        flags->sequences ? flags->sequences : trainer->config().eval_sequences;
    ag::check(sequences >= 1 && sequences <= 1000000, "eval",
              "--sequences must be from 1 to 1000000, got ", sequences);
    for (auto length : lengths)
      as_usage_error([&] {  // the lengths asked for, checked first
        ag::check(length >= trainer->task().min_length() && length <= 100000, "eval", "length ",
                  length, " is outside ", trainer->task().min_length(), " .. 100000");
        trainer->task().check_length(length);
        check_memory(trainer->config(), trainer->config().model.vocab, length);
      });
    const auto results =
        evaluate_lengths(*trainer, lengths, sequences,
                         flags->contiguous ? EvalPositions::contiguous : EvalPositions::as_trained);
    if (!flags->plot.empty()) {
      const TrainConfig& c = trainer->config();
      Series series{
          c.encoding + " on " + c.task + " (trained at " + std::to_string(c.length) + ")", {}, {}};
      for (const auto& [length, e] : results) {
        series.x.push_back(double(length));
        series.y.push_back(e.accuracy);
      }
      write_line_plot(flags->plot, {series}, "held-out accuracy against sequence length",
                      "sequence length", "accuracy", false, std::make_pair(0.0, 1.0));
    }
    if (!flags->json) return print_evaluations(results);
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [length, e] : results)
      out[std::to_string(length)] = {
          {"accuracy", e.accuracy}, {"loss", e.loss}, {"scored_tokens", e.scored}};
    std::cout << out.dump(2) << "\n";
  });
}

// The longest sequence `pe heatmap` draws: 4096 x 4096 cells a panel is already far more than
// a figure can show.
constexpr std::int64_t kLongestHeatmap = 4096;

void add_heatmap_command(CLI::App& app) {
  struct Flags {
    std::string checkpoint, out;
    std::int64_t length = 0;
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("heatmap", "attention of a trained model on a held-out sequence");
  cmd->add_option("checkpoint", flags->checkpoint, "checkpoint.agt written by pe train")
      ->required()
      ->check(existing_file());
  cmd->add_option("--out", flags->out, "PNG file to write")
      ->required()
      ->check(not_empty("a PNG file"));
  cmd->add_option("--length", flags->length, "sequence length (default: the training length)")
      ->check(whole_number<std::int64_t>(1, kLongestHeatmap));
  cmd->callback([flags] {
    as_usage_error([&] { check_figure_destination(flags->out, "heatmap --out"); });
    auto trainer = Trainer::load(flags->checkpoint);
    const std::int64_t length = flags->length ? flags->length : trainer->config().length;
    ag::check(length >= trainer->task().min_length() && length <= kLongestHeatmap, "heatmap",
              "--length ", length, " is outside ", trainer->task().min_length(), " .. ",
              kLongestHeatmap);
    trainer->task().check_length(length);
    require_memory(
        estimated_heatmap_bytes(trainer->config(), trainer->config().model.vocab, length),
        "drawing the attention at length " + std::to_string(length));
    write_attention_figure(*trainer, length, flags->out);
    std::printf("wrote %s\n", flags->out.c_str());
  });
}

void add_inspect_command(CLI::App& app) {
  struct Flags {
    InspectRequest request;            // its defaults are the command's
    std::vector<std::string> options;  // key=value, into request.options
    std::string hf_config;             // a model's config.json (chapter 11)
    bool json = false;
  };
  auto flags = std::make_shared<Flags>();
  InspectRequest& r = flags->request;
  auto* cmd = app.add_subcommand(
      "inspect",
      "an encoding's own quantities as JSON; `inspect rope --hf-config FILE`: a model's "
      "config.json, its layers' rotations explained");
  cmd->add_option("encoding", r.encoding, "encoding name (see pe list)")->required();
  cmd->add_option("--length", r.length,
                  "positions (with --hf-config: the length of the pass, default none: the "
                  "frequencies at initialisation)")
      ->capture_default_str()
      ->check(within(limits::length));
  std::vector<CLI::Option*> encoding_only = {
      cmd->add_option("--dim", r.dim, "model width C")
          ->capture_default_str()
          ->check(whole_number<std::int64_t>(1, 65536)),
      cmd->add_option("--heads", r.heads, "attention heads")
          ->capture_default_str()
          ->check(whole_number<std::int64_t>(1, 1024)),
      cmd->add_option("--option,-o", flags->options, "encoding option key=value (repeatable)"),
      cmd->add_option("--vector", r.vector,
                      "a query of one head (D = dim / heads numbers, comma-separated) to pass "
                      "through the encoding's rotate hook; printed as \"rotated\"")
          ->delimiter(',')
          ->check(real_number(-INFINITY)),
      cmd->add_option("--positions", r.positions,
                      "positions at which to rotate --vector (default 0 .. length-1)")
          ->delimiter(',')
          ->check(whole_number<std::int64_t>(0, 1000000))};
#if PE_HAS_CHAPTER_11
  auto* hf = cmd->add_option("--hf-config", flags->hf_config,
                             "with `inspect rope`: a Hugging Face model's config.json, read "
                             "and explained layer type by layer type (chapter 11): a table, "
                             "or JSON with --json")
                 ->check(not_empty("a config.json file"));
  for (auto* option : encoding_only) hf->excludes(option);
  cmd->add_flag("--json", flags->json, "with --hf-config: print the explanation as JSON")
      ->needs(hf);
#endif
  cmd->callback([flags, cmd] {
#if PE_HAS_CHAPTER_11
    if (!flags->hf_config.empty()) {
      if (flags->request.encoding != "rope")
        throw UsageError(ag::detail::concat(
            "inspect: ",
            "--hf-config explains a model's rotations: it goes with `pe inspect rope`, not '",
            flags->request.encoding, "'"));
      const HfModelRope model = read_hf_config_file(flags->hf_config);
      const std::int64_t length = cmd->count("--length") ? flags->request.length : 0;
      if (flags->json)
        std::cout << explain_hf_rope(model, length).dump() << "\n";
      else
        std::cout << hf_rope_table(model, length);
      return;
    }
#else
    (void)cmd;
#endif
    flags->request.options = parse_pairs(flags->options, "--option");
    // Nothing but the command line goes into it: what it refuses is a usage error.
    const auto quantities = as_usage_error([&] { return inspect_encoding(flags->request); });
    write_stdout(quantities.dump() + "\n");
  });
}

void add_table_command(CLI::App& app) {
  auto flags = std::make_shared<TableOptions>();
  auto* cmd = app.add_subcommand(
      "table",
      "the book's encodings on the reference tasks: Part I's (up to chapter 8, the table the "
      "chapters quote) unless --part or --encodings say otherwise");
  auto* steps = cmd->add_option("--steps", flags->steps, "steps per run")
                    ->capture_default_str()
                    ->check(within(limits::steps));
  cmd->add_option("--seed", flags->seed, "seed of every run")->capture_default_str()->check(kSeed);
  add_out_option(*cmd, flags->out_dir,
                 "output folder (default results/table, with --fast results/table-fast)");
  auto* encodings =
      cmd->add_option("--encodings", flags->encodings, "only these encodings (default: --part's)")
          ->delimiter(',')
          ->check(not_empty("an encoding name"));
  // Read as a word, turned into the part once it has passed the check.
  auto part = std::make_shared<std::string>("1");
  const std::string first = std::to_string(kFirstChapterOfPartTwo);
  cmd->add_option("--part", *part,
                  "which encodings, by the book's parts: 1 (Part I's, chapters up to " +
                      std::to_string(kFirstChapterOfPartTwo - 1) +
                      ": the table the chapters quote), 2 (Part II's, chapter " + first +
                      " on) or all (every encoding in the build)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              table_part_from(text);
              return "";
            } catch (const ag::Error&) {
              return "expected 1, 2 or all, got '" + text + "'";
            }
          },
          "1|2|all"))
      ->excludes(encodings);
  cmd->add_option("--tasks", flags->tasks, "tasks")
      ->delimiter(',')
      ->capture_default_str()
      ->check(not_empty("a task name"));
  cmd->add_option("--layers", flags->layers, "layer counts to run")
      ->delimiter(',')
      ->capture_default_str()
      ->check(within(limits::layers));
  cmd->add_flag("--fast", flags->fast,
                "a quick look with the same verdicts: width 64, 400 steps at a higher rate "
                "(the chapters quote the full table)")
      ->excludes(steps);
  cmd->add_option("--jobs,-j", flags->jobs,
                  "runs trained at once, one OpenMP thread each (0: one per core; 1: one "
                  "after the other with every core; more than the cores: capped to them)")
      ->capture_default_str()
      ->check(whole_number(0, 1000000));
  cmd->add_flag("--reuse", flags->reuse,
                "take runs already finished in the output folder with the same configuration");
  cmd->add_flag("--overwrite", flags->overwrite,
                "replace runs of other configurations that the rows' folders hold");
#if PE_HAS_CHAPTER_8  // evaluation past the training length is chapter 8's
  cmd->add_option("--lengths", flags->lengths,
                  "also evaluate every row's model at these lengths, e.g. 32,64,128,256,512 "
                  "(writes lengths.md and lengths.json)")
      ->delimiter(',')
      ->check(within(limits::length));
  flags->length_table = write_length_table;
#endif
  cmd->callback([flags, part] {
    flags->part = table_part_from(*part);
    as_usage_error([&] {  // names the table cannot train, refused before any run starts
      const auto known = registered_encodings();
      for (const auto& name : flags->encodings)
        ag::check(std::any_of(known.begin(), known.end(),
                              [&](const auto& entry) { return entry.name == name; }),
                  "table", "unknown encoding '", name, "' (see pe list)");
      const auto tasks = task_names();
      for (const auto& name : flags->tasks)
        ag::check(std::find(tasks.begin(), tasks.end(), name) != tasks.end(), "table",
                  "unknown task '", name, "' (see pe list)");
      const auto once = [](const auto& values, const char* flag) {
        for (auto at = values.begin(); at != values.end(); ++at)
          ag::check(std::find(values.begin(), at, *at) == at, "table", flag, " names ", *at,
                    " twice: each row is trained once");
      };
      once(flags->encodings, "--encodings");
      once(flags->tasks, "--tasks");
      once(flags->layers, "--layers");
    });
    run_table(*flags);
  });
}

}  // namespace pe
