// pe generate (through the key/value cache or a full pass per token), encoding options given
// at evaluation time (pe eval -o), fine-tunes from a checkpoint (pe train --init), the RoPE
// scaling rules in pe inspect and chapter 12's window cache (pe generate and pe eval --window):
// run as a reader runs them. Most are chapter 8's too (cached generation past the training
// length, the scaling rules): `// chapter: 08` gives each one that chapter's label, so that
// `ctest -L ch08` runs them; the window cache's carry chapter 12's.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "programs/pe/tests/run_pe.hpp"

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string temp_dir(const std::string& name) {
  return pe_test::fresh_dir("pe_cli_generate_" + name);
}

// A two-layer character model trained for a few steps on sequences of 8: enough to have
// weights that are not symmetric, in a fraction of a second.
const char* kTinyCharRun =
    "train --task charlm --width 16 --heads 2 --layers 2 --ffn 32 --length 8 --batch 4 "
    "--steps 6 --warmup 1 --eval-every 6 --eval-sequences 8 --lr 0.01 --quiet --no-figures";

std::string train_char_model(const std::string& dir, const std::string& encoding,
                             const std::string& extra = "") {
  // A folder of its own for each model: a second configuration in one folder is refused.
  std::string out = dir + "/" + encoding + extra;
  for (std::size_t i = dir.size() + 1; i < out.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(out[i]))) out[i] = '_';
  const Outcome o =
      run(std::string(kTinyCharRun) + " -e " + encoding + " " + extra + " --out " + out);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  return out + "/checkpoint.agt";
}

nlohmann::json json_of(const Outcome& o) {
  EXPECT_EQ(o.exit_code, 0) << o.output;
  return nlohmann::json::parse(o.output);
}

}  // namespace

// chapter: 08
TEST(CliGenerate, CachedAndUncachedGenerationWriteTheSameText) {
  const std::string dir = temp_dir("same");
  // The prompt and 30 new characters run to position 40, five times the training length.
  const std::string prompt = "\"the Program \"";
  const std::vector<std::pair<std::string, std::string>> models = {
      {"sinusoidal", ""},
      {"learned", "--max-length 64"},
      {"shaw", ""},
      {"t5", ""},
      {"alibi", ""},
      {"rope", ""},
      {"rope", "-o layout=half -o fraction=0.5"}};
  for (const auto& [encoding, extra] : models) {
    const std::string checkpoint = train_char_model(dir, encoding, extra);
    // at generation time: RoPE as trained, and the three fixed-scale rules
    std::vector<std::string> rules = {""};
    if (encoding == "rope")
      rules = {"", "-o scaling=linear -o scale=4", "-o scaling=ntk -o scale=4",
               "-o scaling=yarn -o scale=4 -o train_length=8"};
    for (const auto& rule : rules)
      for (const std::string sampling : {"", "--temperature 0.8 --seed 3"}) {
        const std::string command = "generate " + checkpoint + " --prompt " + prompt +
                                    " --tokens 30 " + rule + " " + sampling;
        const Outcome cached = run(command), full = run(command + " --no-cache");
        ASSERT_EQ(cached.exit_code, 0) << command << "\n" << cached.output;
        EXPECT_EQ(cached.output, full.output) << command;
        EXPECT_EQ(cached.output.size(), 12 + 30 + 1u) << command << "\n" << cached.output;
        EXPECT_EQ(cached.output.rfind("the Program ", 0), 0u)
            << cached.output;  // the prompt, as typed
        EXPECT_EQ(run(command).output, cached.output) << "not repeatable: " << command;
      }
  }
}

// chapter: 08
TEST(CliGenerate, EveryByteOfTheCorpusRoundTripsThroughThePrompt) {
  // A corpus of the bytes 1 .. 255 (charlm spells many of them as "\n", "\xHH", ...):
  // the prompt holding all of them comes back byte for byte before the new character.
  const std::string dir = temp_dir("bytes");
  std::string bytes, octal;
  for (int b = 1; b < 256; ++b) {
    bytes += char(b);
    const char digits[] = {'\\', char('0' + b / 64), char('0' + b / 8 % 8), char('0' + b % 8)};
    octal.append(digits, sizeof digits);
  }
  std::ofstream(dir + "/corpus.txt", std::ios::binary) << bytes << bytes;
  const std::string checkpoint =
      train_char_model(dir, "rope", "--task-option corpus=" + dir + "/corpus.txt");
  // printf's octal escapes make every byte; the shell's $(...) passes them as one argument
  const Outcome o =
      run("generate " + checkpoint + " --tokens 1 --prompt \"$(printf '" + octal + "')\"");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  ASSERT_EQ(o.output.size(), 255 + 1 + 1u);
  EXPECT_EQ(o.output.substr(0, 255), bytes);
}

// chapter: 08
TEST(CliGenerate, BadRequestsGetOneLineErrors) {
  const std::string dir = temp_dir("errors");
  const std::string charlm = train_char_model(dir, "learned");  // a table of 8 rows
  expect_one_line_error(run("generate " + charlm + " --prompt the --tokens 10"),
                        "the table has max_len 8");
  expect_one_line_error(run("generate " + charlm + " --prompt ZEBRA --tokens 2"),
                        "character 'Z' at index 0 is not in the model's vocabulary");
  expect_one_line_error(run("generate " + charlm + " --prompt the --tokens 0"), "--tokens");
  expect_one_line_error(run("generate " + charlm + " --prompt the --tokens -3"), "--tokens");
  expect_one_line_error(run("generate " + charlm + " --prompt \"\" --tokens 2"), "prompt is empty");
  expect_one_line_error(run("generate " + charlm + " --prompt the --tokens 2 --temperature -1"),
                        "--temperature");
  expect_one_line_error(run("generate " + dir + "/missing.agt --prompt the --tokens 2"),
                        "missing.agt");
  const std::string rope = train_char_model(dir, "rope");
  const std::string dynamic =
      "generate " + rope + " --prompt the --tokens 12 -o scaling=dynamic -o train_length=8";
  expect_one_line_error(run(dynamic), "add --no-cache");
  EXPECT_EQ(run(dynamic + " --no-cache").exit_code, 0);
  // the checkpoint's encoding options are replaced, and checked, as in pe eval
  expect_one_line_error(run("generate " + charlm + " --prompt the --tokens 2 -o base=100"),
                        "has no option 'base'");
  const Outcome shiftk =
      run("train --width 16 --ffn 32 --length 8 --batch 4 --steps 2 --warmup 1 --eval-every 2 "
          "--eval-sequences 8 --quiet --no-figures --out " +
          dir + "/shiftk");
  ASSERT_EQ(shiftk.exit_code, 0) << shiftk.output;
  expect_one_line_error(run("generate " + dir + "/shiftk/checkpoint.agt --prompt ABC --tokens 2"),
                        "is a model of task shiftk; pe generate needs a charlm checkpoint");
  // within the table: fine
  const Outcome ok = run("generate " + charlm + " --prompt the --tokens 6");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

// chapter: 08
TEST(CliGenerate, EvalTakesEncodingOptionsOverTheCheckpoints) {
  const std::string dir = temp_dir("eval");
  const std::string checkpoint = train_char_model(dir, "rope");
  const std::string eval = "eval " + checkpoint + " --lengths 8,32 --sequences 8 --json";
  const auto plain = json_of(run(eval));
  EXPECT_EQ(json_of(run(eval + " -o scaling=none")), plain);  // the default, spelled out
  const auto yarn = json_of(run(eval + " -o scaling=yarn -o scale=4 -o train_length=8"));
  EXPECT_NE(yarn["32"]["loss"], plain["32"]["loss"]);
  const auto dynamic = json_of(run(eval + " -o scaling=dynamic -o train_length=8"));
  EXPECT_EQ(dynamic["8"], plain["8"]);  // s = max(1, 8 / 8) = 1: RoPE as trained
  EXPECT_NE(dynamic["32"]["loss"], plain["32"]["loss"]);
  expect_one_line_error(run(eval + " -o scaling=yarn -o scale=4"), "yarn needs train_length");
  expect_one_line_error(run(eval + " -o scaling=linear -o scale=0.5"), "scale must be at least 1");
  expect_one_line_error(run(eval + " -o scaling"), "key=value");
}

// chapter: 08
TEST(CliGenerate, TrainInitStartsFromACheckpointsWeights) {
  const std::string dir = temp_dir("init");
  const std::string checkpoint = train_char_model(dir, "rope");
  const auto before = json_of(run("eval " + checkpoint + " --lengths 32 --json"));
  // One step at a negligible rate, at length 32 with a scaling rule: the model is the
  // checkpoint's, so its loss at 32 is the checkpoint's with the same rule.
  const std::string tune =
      "train --task charlm --width 16 --heads 2 --layers 2 --ffn 32 --length 32 --batch 4 "
      "--steps 1 --warmup 1 --eval-every 1 --eval-sequences 8 --lr 1e-12 --quiet --no-figures "
      "-e rope -o scaling=linear -o scale=4 --eval-lengths 32 --init " +
      checkpoint;
  ASSERT_EQ(run(tune + " --out " + dir + "/tuned").exit_code, 0);
  std::ifstream file(dir + "/tuned/run.json");
  const auto tuned = nlohmann::json::parse(file);
  EXPECT_EQ(tuned["init_from"], checkpoint);
  const auto with_rule =
      json_of(run("eval " + checkpoint + " --lengths 32 --json -o scaling=linear -o scale=4"));
  EXPECT_NEAR(tuned["final"]["32"]["loss"].get<double>(), with_rule["32"]["loss"].get<double>(),
              1e-6);
  EXPECT_GT(std::abs(with_rule["32"]["loss"].get<double>() - before["32"]["loss"].get<double>()),
            1e-6);
  // a model of another shape, or --init with --resume, is refused in one line
  expect_one_line_error(run("train --task charlm --width 32 --heads 2 --layers 2 --steps 1 "
                            "-e rope --quiet --no-figures --init " +
                            checkpoint + " --out " + dir + "/wide"),
                        "tokens.weight");
  expect_one_line_error(
      run("train --resume " + checkpoint + " --init " + checkpoint + " --out " + dir + "/both"),
      "--init");
}

// chapter: 08
TEST(CliGenerate, InspectRopeShowsTheScalingInForce) {
  // d = 8, dynamic NTK trained at 8, inspected at 16: s = 2, base' = 10000 * 2^(8/6), and the
  // slowest frequency theta'_3 = 10000^(-3/4) / 2 = 0.0005
  const auto dynamic =
      json_of(run("inspect rope --dim 8 --length 16 -o scaling=dynamic -o train_length=8"));
  EXPECT_EQ(dynamic["scale"]["values"][0], 2.0);
  EXPECT_EQ(dynamic["attention_factor"]["values"][0], 1.0);
  const auto theta = dynamic["frequencies"]["values"];
  ASSERT_EQ(theta.size(), 4u);
  EXPECT_EQ(theta[0], 1.0);
  EXPECT_NEAR(theta[3].get<double>(), 0.0005, 1e-15);
  const auto yarn =
      json_of(run("inspect rope --dim 8 --length 8 -o scaling=yarn -o scale=4 -o train_length=32"));
  EXPECT_NEAR(yarn["attention_factor"]["values"][0].get<double>(), 1.1386294361, 1e-9);
  EXPECT_EQ(yarn["scale"]["values"][0], 4.0);
  const auto plain = json_of(run("inspect rope --dim 8 --length 8"));
  EXPECT_EQ(plain["frequencies"]["values"][1], 0.1);  // 10000^(-2/8)
  expect_one_line_error(run("inspect rope --dim 8 -o scaling=cubic"), "unknown scaling 'cubic'");
  expect_one_line_error(run("inspect rope --dim 8 -o scaling=linear"), "needs scale=S");
}

// Chapter 12's window cache in pe generate: it writes the tokens asked for, past the training
// length in constant memory, and without eviction it is the plain cache's greedy text.
// chapter: 12
TEST(CliGenerate, WindowCacheWritesTheTokensAndRefusesInOneLine) {
  const std::string dir = temp_dir("window");
  const std::string rope = train_char_model(dir, "rope");
  const std::string base = "generate " + rope + " --prompt \"the Program \" --tokens 30";
  const Outcome plain = run(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  for (const std::string window :
       {"--window 6 --sinks 2", "--window 6 --sinks 2 --positions original", "--window 5",
        "--window 3 --sinks 1 --temperature 0.8 --seed 3"}) {
    const Outcome o = run(base + " " + window);
    ASSERT_EQ(o.exit_code, 0) << window << "\n" << o.output;
    EXPECT_EQ(o.output.size(), 12 + 30 + 1u) << window << "\n" << o.output;
    EXPECT_EQ(o.output.rfind("the Program ", 0), 0u) << o.output;
  }
  EXPECT_EQ(run(base + " --window 64 --sinks 4").output, plain.output);  // nothing evicted
  EXPECT_EQ(run(base + " --window 64 --positions original").output, plain.output);
  expect_one_line_error(run(base + " --window 6 --no-cache"), "--no-cache");
  expect_one_line_error(run(base + " --sinks 2"), "--sinks");
  expect_one_line_error(run(base + " --positions original"), "--positions");
  expect_one_line_error(run(base + " --window 6 --positions rotated"), "--positions");
  expect_one_line_error(run(base + " --window 0"), "--window");
  expect_one_line_error(run(base + " --window 6 --sinks -1"), "--sinks");
  // an absolute encoding's kept keys carry the positions they came at: refused in cache mode
  const std::string sinusoidal = train_char_model(dir, "sinusoidal");
  const std::string absolute = "generate " + sinusoidal + " --prompt \"the Program \" --tokens 4";
  expect_one_line_error(run(absolute + " --window 6"),
                        "encoding 'sinusoidal' adds positions to the token embeddings");
  EXPECT_EQ(run(absolute + " --window 6 --positions original").exit_code, 0);
}

// pe eval --window: one held-out text streamed through the window cache, in bits per character.
// chapter: 12
TEST(CliGenerate, EvalStreamsAHeldOutTextThroughTheWindowCache) {
  const std::string dir = temp_dir("eval_window");
  const std::string rope = train_char_model(dir, "rope");
  const std::string eval = "eval " + rope + " --characters 40 --json";
  const auto cache = json_of(run(eval + " --window 6 --sinks 2"));
  EXPECT_EQ(cache["characters"], 40);
  EXPECT_EQ(cache["sinks"], 2);
  EXPECT_EQ(cache["window"], 6);
  EXPECT_EQ(cache["positions"], "cache");
  const double bits = cache["bits_per_character"].get<double>();
  EXPECT_TRUE(std::isfinite(bits) && bits > 0) << bits;
  const auto original = json_of(run(eval + " --window 6 --sinks 2 --positions original"));
  EXPECT_NE(original["bits_per_character"], cache["bits_per_character"]);  // past 8 positions
  // nothing evicted: the two modes read the same keys at the same positions
  const auto all_cache = json_of(run(eval + " --window 64"));
  const auto all_original = json_of(run(eval + " --window 64 --positions original"));
  EXPECT_NEAR(all_cache["bits_per_character"].get<double>(),
              all_original["bits_per_character"].get<double>(), 1e-5);
  const Outcome table = run("eval " + rope + " --window 6 --sinks 2 --characters 40");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("bits per character"), std::string::npos) << table.output;
  expect_one_line_error(run("eval " + rope + " --window 6 --lengths 8"), "--window");
  expect_one_line_error(run("eval " + rope + " --sinks 2"), "--sinks");
  expect_one_line_error(run("eval " + rope + " --characters 40"), "--characters");
  expect_one_line_error(run("eval " + rope + " --window 6 --positions rotated"), "--positions");
  const Outcome shiftk =
      run("train --width 16 --ffn 32 --length 8 --batch 4 --steps 2 --warmup 1 --eval-every 2 "
          "--eval-sequences 8 --quiet --no-figures --out " +
          dir + "/shiftk");
  ASSERT_EQ(shiftk.exit_code, 0) << shiftk.output;
  expect_one_line_error(run("eval " + dir + "/shiftk/checkpoint.agt --window 6"),
                        "needs a charlm model");
}
