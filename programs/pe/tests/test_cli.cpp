// The `pe` command line, run as a reader would run it: good commands leave their files,
// bad ones print one line and exit non-zero, and nothing crashes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "programs/pe/tests/run_pe.hpp"

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "pe_cli_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

const char* kTinyRun =
    "train --width 16 --ffn 32 --length 8 --batch 4 --steps 4 --warmup 1 --eval-every 2 "
    "--eval-sequences 8 --quiet";

}  // namespace

TEST(Cli, ListNamesEncodingsAndTasks) {
  const Outcome o = run("list");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("none"), std::string::npos);
  EXPECT_NE(o.output.find("shiftk"), std::string::npos);
  EXPECT_NE(o.output.find("alternating"), std::string::npos);
  for (const char* line :
       {"flipflop     flipflop: ", "selcopy      selcopy: ", "counting     counting: "})
    EXPECT_NE(o.output.find(line), std::string::npos) << line;
}

// Chapter 10's tasks have vocabularies of their own (5, 28 and 23 tokens): the model is sized
// from the task, and eval and heatmap rebuild it so from the checkpoint.
TEST(Cli, TasksWithTheirOwnVocabularyTrainAndEvaluate) {
  for (const std::string task :
       {"flipflop", "selcopy --task-option count=3", "counting --task-option vars=2"}) {
    SCOPED_TRACE(task);
    const std::string dir = temp_dir("vocab_" + task.substr(0, task.find(' ')));
    const Outcome train = run(pe_test::kTinyTrain + " --task " + task + " --out " + dir);
    ASSERT_EQ(train.exit_code, 0) << train.output;
    const Outcome eval = run("eval " + dir + "/checkpoint.agt --lengths 8,16 --json");
    ASSERT_EQ(eval.exit_code, 0) << eval.output;
    const auto accuracies = nlohmann::json::parse(eval.output);
    ASSERT_TRUE(accuracies.contains("8") && accuracies.contains("16"));
    EXPECT_GT(accuracies["16"]["scored_tokens"].get<int>(), 0);
    EXPECT_EQ(run("heatmap " + dir + "/checkpoint.agt --out " + dir + "/h.png").exit_code, 0);
    if (task != "flipflop") continue;
    // A length against the task's own rule is refused before any evaluation.
    expect_one_line_error(run("eval " + dir + "/checkpoint.agt --lengths 8,9"),
                          "task flipflop needs an even length (instruction-bit pairs), got 9");
    expect_one_line_error(
        run("heatmap " + dir + "/checkpoint.agt --length 9 --out " + dir + "/h9.png"),
        "needs an even length");
  }
}

namespace {

// What git says of the sources pe was built from, as lab/run.cpp reads it.
std::string expected_source_commit() {
  auto output_of = [](const std::string& command) {
    std::string text;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[256];
      while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
      pclose(pipe);
    }
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  };
  const std::string git = std::string("git -C '") + PE_SOURCE_DIR + "' ";
  const std::string commit = output_of(git + "rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const bool dirty = !output_of(git +
                                "status --porcelain --untracked-files=no -- '*.cpp' "
                                "'*.hpp' '*.in' '*.cmake' 'CMakeLists.txt' "
                                "'CMakePresets.json' 2>/dev/null")
                          .empty();
  return dirty ? commit + "-dirty" : commit;
}

}  // namespace

TEST(Cli, TrainWritesEverythingAndEvalReadsTheCheckpoint) {
  const std::string dir = temp_dir("train");
  const Outcome o = run(std::string(kTinyRun) + " --out " + dir);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  for (const char* file :
       {"run.json", "history.csv", "checkpoint.agt", "attention.png", "curves.png"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  std::ifstream json_file(dir + "/run.json");
  const auto run_json = nlohmann::json::parse(json_file);
  EXPECT_EQ(run_json["config"]["steps"], 4);
  EXPECT_EQ(run_json["history"].size(), 2u);
  EXPECT_TRUE(run_json["final"].contains("8"));
  EXPECT_TRUE(run_json["versions"].contains("compiler"));
  // The commit of the sources, read as the run started, "-dirty" with uncommitted changes.
  EXPECT_EQ(run_json["versions"]["git_commit"], expected_source_commit());

  const Outcome eval = run("eval " + dir + "/checkpoint.agt --lengths 8,12 --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  const auto accuracies = nlohmann::json::parse(eval.output);
  EXPECT_TRUE(accuracies.contains("8") && accuracies.contains("12"));

  const Outcome heat = run("heatmap " + dir + "/checkpoint.agt --out " + dir + "/h.png");
  EXPECT_EQ(heat.exit_code, 0) << heat.output;
  EXPECT_TRUE(std::filesystem::exists(dir + "/h.png"));

  const Outcome plot =
      run("eval " + dir + "/checkpoint.agt --lengths 8,16,24 --plot " + dir + "/len.png");
  EXPECT_EQ(plot.exit_code, 0) << plot.output;
  EXPECT_TRUE(std::filesystem::exists(dir + "/len.png"));
}

TEST(Cli, ResumeContinuesASavedRun) {
  const std::string dir = temp_dir("resume");
  ASSERT_EQ(run(std::string(kTinyRun) + " --no-figures --out " + dir + "/a").exit_code, 0);
  const Outcome more = run("train --resume " + dir +
                           "/a/checkpoint.agt --steps 6 --quiet --no-figures --out " + dir + "/b");
  ASSERT_EQ(more.exit_code, 0) << more.output;
  std::ifstream json_file(dir + "/b/run.json");
  const auto run_json = nlohmann::json::parse(json_file);
  EXPECT_EQ(run_json["config"]["steps"], 6);
  EXPECT_EQ(run_json["history"].back()["step"], 6);
  expect_one_line_error(
      run("train --resume " + dir + "/a/checkpoint.agt --steps 2 --quiet --out " + dir + "/c"),
      "done 4");
  // The configuration comes from the checkpoint: an option that would be ignored is refused.
  expect_one_line_error(
      run("train --resume " + dir + "/a/checkpoint.agt --layers 3 --quiet --out " + dir + "/d"),
      "--layers");
}

// `pe table --reuse` takes a finished run with the same configuration and, with --overwrite
// only, retrains one whose configuration differs; a damaged run.json is an error, not a
// silently retrained row.
TEST(Cli, TableReusesOnlyFinishedRunsWithTheSameConfiguration) {
  const std::string dir = temp_dir("table");
  const std::string table = "table --encodings none --tasks shiftk --out " + dir;
  const Outcome first = run(table + " --steps 3");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output.find("(reused)"), std::string::npos) << first.output;
  auto accuracy = [&] {
    std::ifstream in(dir + "/table.json");
    return nlohmann::json::parse(in)["rows"][0]["accuracy"].get<double>();
  };
  const double trained = accuracy();

  const Outcome again = run(table + " --steps 3 --reuse");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("(reused)"), std::string::npos) << again.output;
  EXPECT_EQ(accuracy(), trained);

  // Another configuration in the row's folder: refused before anything trains, naming what
  // differs, unless --overwrite.
  const Outcome refused = run(table + " --steps 4 --reuse");
  expect_one_line_error(refused,
                        "holds a finished run of another configuration (steps: 3 there, 4 here)");
  EXPECT_EQ(accuracy(), trained);
  const Outcome longer = run(table + " --steps 4 --reuse --overwrite");
  ASSERT_EQ(longer.exit_code, 0) << longer.output;
  EXPECT_EQ(longer.output.find("(reused)"), std::string::npos) << longer.output;

  std::ofstream(dir + "/none-shiftk-l1/run.json") << "{\"config\": ";
  expect_one_line_error(run(table + " --steps 4 --reuse"), "not valid JSON");
}

// `pe table --lengths` evaluates every row's model at each length without retraining: a number
// where the model runs, the learned table's own refusal where it has no row, in both files.
// grades: task 8.4
TEST(Cli, TableLengthsEvaluatesEveryRowAtEveryLength) {
  const std::string dir = temp_dir("table_lengths");
  const Outcome o =
      run("table --encodings learned,rope --tasks shiftk --steps 2 --lengths 32,64 "
          "--out " +
          dir);
  // pe's one-line error first: a coursework stub's error names its task there.
  if (o.exit_code != 0) FAIL() << o.last_line() << "\n" << o.output;
  std::ifstream in(dir + "/lengths.json");
  const auto table = nlohmann::json::parse(in);
  ASSERT_EQ(table["rows"].size(), 2u);
  for (const auto& row : table["rows"]) {
    ASSERT_EQ(row["results"].size(), 2u);
    EXPECT_EQ(row["results"][0]["length"], 32);
    EXPECT_EQ(row["results"][1]["length"], 64);
    const double at32 = row["results"][0]["accuracy"].get<double>();
    EXPECT_TRUE(at32 >= 0 && at32 <= 1) << at32;
  }
  EXPECT_EQ(table["rows"][0]["encoding"], "learned");
  EXPECT_FALSE(table["rows"][0]["results"][1].contains("accuracy"));
  EXPECT_NE(table["rows"][0]["results"][1]["error"].get<std::string>().find("max_len 32"),
            std::string::npos);
  const double rope64 = table["rows"][1]["results"][1]["accuracy"].get<double>();
  EXPECT_TRUE(rope64 >= 0 && rope64 <= 1) << rope64;
  ASSERT_EQ(table["table"].size(), 4u);  // header, rule, two rows
  EXPECT_EQ(table["table"][0], "| encoding | task | layers | 32 | 64 |");
  EXPECT_EQ(table["table"][2].get<std::string>().rfind("| learned | shiftk | 1 | ", 0), 0u);
  EXPECT_NE(table["table"][2].get<std::string>().find("| cannot run: table has 32 rows |"),
            std::string::npos);
  std::ifstream md(dir + "/lengths.md");
  const std::string markdown((std::istreambuf_iterator<char>(md)), {});
  EXPECT_NE(markdown.find("cannot run: table has 32 rows"), std::string::npos);

  expect_one_line_error(
      run("table --encodings none --tasks shiftk --steps 2 --lengths 32,0 --out " + dir),
      "--lengths");
  expect_one_line_error(run("table --lengths 32,abc --out " + dir), "abc");
}

// `pe table --fast` has its own number of steps: asking for another is refused, not ignored.
TEST(Cli, FastTableRefusesSteps) {
  expect_one_line_error(run("table --fast --steps 10 --out " + temp_dir("fast_steps")), "--steps");
}

// `pe table --part 2` trains the encodings of Part II's chapters (9 on), as `pe list` names
// them, and only those; the default (Part I's) is the lab's test (Table.PartsSplitAtChapter9).
// A part that is no part, or a part beside --encodings, is refused in one line.
TEST(Cli, TablePartTwoTrainsTheLaterChaptersEncodings) {
  std::vector<std::string> later;  // "  kerple       chapter 09: ..."
  std::istringstream list(run("list").output);
  for (std::string line; std::getline(list, line);) {
    std::istringstream words(line);
    std::string name, chapter, number;
    if (words >> name >> chapter >> number && chapter == "chapter" && number >= "09")
      later.push_back(name);
  }
  const std::string dir = temp_dir("table_part2");
  const Outcome o = run("table --part 2 --tasks shiftk --steps 2 --out " + dir);
  if (later.empty()) {  // a build of Part I only
    expect_one_line_error(o, "--part 2 selects no encoding");
  } else {
    ASSERT_EQ(o.exit_code, 0) << o.output;
    std::ifstream in(dir + "/table.json");
    const auto table = nlohmann::json::parse(in);
    std::vector<std::string> trained;
    for (const auto& row : table["rows"]) trained.push_back(row["encoding"].get<std::string>());
    EXPECT_EQ(trained, later);
  }
  for (const char* bad : {"3", "II", "", "1,2"})
    expect_one_line_error(run(std::string("table --part '") + bad + "' --out " + dir), "--part",
                          bad);
  expect_one_line_error(run("table --part 1 --encodings none --out " + dir), "--encodings");
  const Outcome help = run("table --help");
  EXPECT_NE(help.output.find("Part I's, chapters up to 8"), std::string::npos) << help.output;
}

// `pe table --jobs 2` trains two runs at once, one OpenMP thread each: the table keeps the
// planned order, each run.json says 1 thread, and the numbers equal those of the same runs
// trained one after the other with one thread.
TEST(Cli, TableJobsGiveTheNumbersOfSingleThreadedRuns) {
  const std::string tasks = "table --encodings none --tasks shiftk,alternating --steps 3 ";
  const std::string parallel = temp_dir("table_jobs2"), sequential = temp_dir("table_jobs1");
  const Outcome two = run(tasks + "--jobs 2 --out " + parallel);
  ASSERT_EQ(two.exit_code, 0) << two.output;
  setenv("OMP_NUM_THREADS", "1", 1);
  const Outcome one = run(tasks + "--jobs 1 --out " + sequential);
  unsetenv("OMP_NUM_THREADS");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto rows = [](const std::string& dir) {
    std::ifstream in(dir + "/table.json");
    return nlohmann::json::parse(in)["rows"];
  };
  const auto a = rows(parallel), b = rows(sequential);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i]["task"], i == 0 ? "shiftk" : "alternating");
    EXPECT_EQ(a[i]["task"], b[i]["task"]);
    EXPECT_EQ(a[i]["loss"].get<double>(), b[i]["loss"].get<double>()) << a[i]["task"];
    EXPECT_EQ(a[i]["accuracy"].get<double>(), b[i]["accuracy"].get<double>());
    std::ifstream in(a[i]["run"].get<std::string>() + "/run.json");
    EXPECT_EQ(nlohmann::json::parse(in)["threads"].get<int>(), 1);
  }
  expect_one_line_error(run(tasks + "--jobs -1 --out " + parallel), "--jobs");
}

// --vector goes through the encoding's rotate hook: RoPE turns (1, 0) of plane 0 by p radians
// at position p; an encoding that does not rotate returns the vector as it is.
TEST(Cli, InspectRotatesAGivenVectorAtGivenPositions) {
  const Outcome rope = run("inspect rope --dim 4 --vector 1,0,0,0 --positions 0,3");
  ASSERT_EQ(rope.exit_code, 0) << rope.output;
  const auto rotated = nlohmann::json::parse(rope.output)["rotated"];
  EXPECT_EQ(rotated["positions"], nlohmann::json::array({0, 3}));
  EXPECT_DOUBLE_EQ(rotated["values"][0][0].get<double>(), 1.0);
  EXPECT_NEAR(rotated["values"][1][0].get<double>(), std::cos(3.0), 1e-12);
  EXPECT_NEAR(rotated["values"][1][1].get<double>(), std::sin(3.0), 1e-12);
  const Outcome none = run("inspect none --dim 4 --vector 1,2,3,4 --positions 5");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_EQ(nlohmann::json::parse(none.output)["rotated"]["values"][0],
            nlohmann::json::array({1.0, 2.0, 3.0, 4.0}));
  expect_one_line_error(run("inspect rope --dim 4 --vector 1,0"), "4 numbers");
  expect_one_line_error(run("inspect rope --dim 4 --positions 2"), "needs --vector");
}

TEST(Cli, InspectPrintsJson) {
  const Outcome o = run("inspect none --length 4 --dim 8");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto j = nlohmann::json::parse(o.output);
  EXPECT_EQ(j["encoding"], "none");
  EXPECT_EQ(j["length"], 4);
}

TEST(Cli, BadCommandLinesGetOneLineErrors) {
  expect_one_line_error(run(""), "subcommand");
  expect_one_line_error(run("frobnicate"), "frobnicate");
  expect_one_line_error(run("train --bogus 3"), "bogus");
  expect_one_line_error(run("train --steps abc"), "abc");
  expect_one_line_error(run("train --heads 0"), "heads");
  expect_one_line_error(run("train --heads 65"), "heads");  // TrainConfig::validate's bound
  expect_one_line_error(run(std::string(kTinyRun) + " --encoding nonsense"), "nonsense");
  expect_one_line_error(run(std::string(kTinyRun) + " --task nonsense"), "nonsense");
  expect_one_line_error(run(std::string(kTinyRun) + " --heads 3"), "divisible");
  expect_one_line_error(run(std::string(kTinyRun) + " --option base"), "key=value");
  expect_one_line_error(run("inspect nonsense"), "nonsense");
  expect_one_line_error(run("inspect none --option base=10"), "base");
}

TEST(Cli, BadFilesGetOneLineErrors) {
  expect_one_line_error(run("eval /nonexistent/checkpoint.agt"), "/nonexistent/checkpoint.agt");
  const std::string dir = temp_dir("badfiles");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/junk.agt") << "this is not a checkpoint";
  expect_one_line_error(run("eval " + dir + "/junk.agt"), "not a tensor file");
  // A real checkpoint with one byte flipped.
  const Outcome train = run(std::string(kTinyRun) + " --no-figures --out " + dir + "/run");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  std::fstream file(dir + "/run/checkpoint.agt", std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(200);
  file.put('\x7f');
  file.close();
  expect_one_line_error(run("eval " + dir + "/run/checkpoint.agt"), "corrupt");
  expect_one_line_error(run("train --width 16 --ffn 32 --steps 1 --quiet --out /proc/forbidden/x"),
                        "/proc/forbidden/x");
}
