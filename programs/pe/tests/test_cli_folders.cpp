// Output folders, as a reader's mistakes and accidents meet them: two programs started on one
// folder (exactly one writes, the other is refused at once, naming the holder), a finished run
// that a new one would replace (refused unless --overwrite, then nothing of it is left), a
// killed holder (no stale lock), and a full disk while a figure is written (the figure under
// its final name is whole or absent, and another file there is never touched).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "ag/io.hpp"
#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;
using pe_test::start;
using pe_test::wait_for;

std::string temp_dir(const std::string& name) { return pe_test::fresh_dir("pe_folders_" + name); }

// A run of a fraction of a second; `steps` makes it as long as a test needs.
std::string tiny(int steps, int seed) {
  return "train --width 16 --ffn 32 --length 8 --batch 4 --warmup 1 --eval-every 1000 "
         "--eval-sequences 8 --quiet --steps " +
         std::to_string(steps) + " --seed " + std::to_string(seed);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Waits until the process `pid` holds the lock of `folder` (its pid is in the lock file).
bool wait_for_lock(const std::string& folder, pid_t pid) {
  for (int i = 0; i < 2000; ++i) {
    if (read(folder + "/.lock") == std::to_string(pid) + "\n") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Every name in a folder, sorted: what a failed command must not leave behind.
std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

// The fault test: a second writer on a folder another process is writing is refused at once,
// in one line naming the folder and the holder's pid; the holder goes on. Killing the holder
// leaves no stale lock: the next run of the same configuration goes ahead.
TEST(CliFolders, SecondWriterIsRefusedAtOnceNamingTheHolder) {
  const std::string dir = temp_dir("two_writers"), out = dir + "/run";
  // No checkpoint before it is killed (an unfinished run of another configuration, which the
  // last run below would rightly refuse to replace, once it reached step 500 under load).
  const pid_t holder = start(tiny(1000000, 1) + " --save-every 0 --no-figures --out " + out);
  ASSERT_TRUE(wait_for_lock(out, holder)) << "the first run never took the lock";
  const auto begin = std::chrono::steady_clock::now();
  const Outcome second = run(tiny(5, 2) + " --out " + out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  expect_one_line_error(second, "the output folder '" + out +
                                    "' is being written by another process (pid " +
                                    std::to_string(holder) + ")");
  EXPECT_LT(seconds, 5.0) << "refused only after " << seconds << " s";
  EXPECT_EQ(kill(holder, 0), 0) << "the holder stopped";

  const Outcome table = run("table --encodings none --tasks shiftk --steps 2 --out " + out);
  expect_one_line_error(table, "(pid " + std::to_string(holder) + ")");

  kill(holder, SIGKILL);
  EXPECT_EQ(wait_for(holder), -1);
  const Outcome after = run(tiny(5, 1) + " --no-figures --out " + out);  // the holder's own run
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_FALSE(fs::exists(out + "/.lock")) << "the lock file is removed when released";
}

// Two runs started at the same moment on one folder: exactly one writes it; the other is
// refused (by the lock, or by the finished run of another seed if the first was that quick).
TEST(CliFolders, TwoWritersStartedTogetherExactlyOneRuns) {
  for (int trial = 0; trial < 3; ++trial) {
    const std::string dir = temp_dir("together"), out = dir + "/run";
    const pid_t a = start(tiny(300, 1) + " --no-figures --out " + out);
    const pid_t b = start(tiny(300, 2) + " --no-figures --out " + out);
    const int status_a = wait_for(a), status_b = wait_for(b);
    ASSERT_EQ((status_a == 0) + (status_b == 0), 1)
        << "exit statuses " << status_a << ", " << status_b;
    EXPECT_EQ(status_a + status_b, 1) << "the refused one exits 1";
    std::ifstream in(out + "/run.json");
    EXPECT_EQ(nlohmann::json::parse(in)["seed"], status_a == 0 ? 1 : 2);
  }
}

// Two tables on one folder: the second is refused before it trains anything.
TEST(CliFolders, SecondTableOnAFolderIsRefused) {
  const std::string dir = temp_dir("two_tables"), out = dir + "/table";
  const pid_t holder = start(
      "table --encodings none --tasks shiftk --steps 1000000 --jobs 1 "
      "--out " +
      out);
  ASSERT_TRUE(wait_for_lock(out, holder));
  expect_one_line_error(run("table --encodings rope --tasks shiftk --steps 2 --out " + out),
                        "is being written by another process (pid " + std::to_string(holder));
  EXPECT_FALSE(fs::exists(out + "/rope-shiftk-l1"));
  kill(holder, SIGKILL);
  wait_for(holder);
}

// `pe table --encodings none,none` trained the row twice into one folder (and with two jobs
// failed on a shared probe file): a name given twice is refused before anything is made.
TEST(CliFolders, TableRefusesARowGivenTwice) {
  const std::string dir = temp_dir("duplicates");
  for (const std::string args :
       {"--encodings none,none --tasks shiftk", "--encodings none --tasks shiftk,shiftk",
        "--encodings none --tasks shiftk --layers 1,1"}) {
    for (const char* jobs : {"1", "2"}) {
      const Outcome o = run("table " + args + " --steps 2 --jobs " + jobs + " --out " + dir + "/t");
      expect_one_line_error(o, "twice");
      EXPECT_FALSE(fs::exists(dir + "/t")) << args;
    }
  }
}

// Every row is checked before the first one trains: an unknown encoding late in the list used
// to stop the table after training the rows before it, with its error on the second line.
TEST(CliFolders, TableChecksEveryRowBeforeTraining) {
  const std::string dir = temp_dir("late_error");
  expect_one_line_error(
      run("table --encodings none,nosuch --tasks shiftk --steps 2 --out " + dir + "/t"),
      "unknown encoding 'nosuch'");
  expect_one_line_error(
      run("table --encodings none --tasks shiftk,nosuch --steps 2 --out " + dir + "/t"), "nosuch");
  expect_one_line_error(
      run("table --fast --encodings none,nosuch --tasks shiftk --out " + dir + "/t"),
      "unknown encoding 'nosuch'");
  EXPECT_FALSE(fs::exists(dir + "/t"));
}

// A finished run of another configuration is refused, naming the folder and what differs, and
// nothing of it changes; with --overwrite it is replaced, and none of its files is left (the
// old model's figures beside a run trained with --no-figures).
TEST(CliFolders, FinishedRunOfAnotherConfigurationIsNotOverwrittenUnasked) {
  const std::string dir = temp_dir("overwrite"), out = dir + "/run";
  ASSERT_EQ(run(tiny(20, 1) + " --out " + out).exit_code, 0);
  ASSERT_TRUE(fs::exists(out + "/attention.png"));
  const std::string before = read(out + "/run.json");
  const Outcome refused = run(tiny(5, 1) + " -e rope --no-figures --out " + out);
  expect_one_line_error(refused,
                        "'" + out +
                            "' holds a finished run of another configuration "
                            "(encoding: \"none\" there, \"rope\" here; steps: 20 there, 5 here)");
  EXPECT_NE(refused.output.find("--overwrite"), std::string::npos) << refused.output;
  EXPECT_EQ(read(out + "/run.json"), before);
  EXPECT_TRUE(fs::exists(out + "/attention.png"));

  const Outcome replaced = run(tiny(5, 1) + " -e rope --no-figures --overwrite --out " + out);
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_EQ(names_in(out), (std::vector<std::string>{"checkpoint.agt", "history.csv", "run.json"}));
  std::ifstream in(out + "/run.json");
  EXPECT_EQ(nlohmann::json::parse(in)["config"]["encoding"], "rope");

  // The same configuration again is no overwrite: it trains (and gives the same run).
  EXPECT_EQ(run(tiny(5, 1) + " -e rope --no-figures --out " + out).exit_code, 0);
}

// A killed run leaves its checkpoint and no run.json: a run of another configuration there is
// refused too (the work of the killed run is kept for --resume).
TEST(CliFolders, UnfinishedRunOfAnotherConfigurationIsKept) {
  const std::string dir = temp_dir("unfinished"), out = dir + "/run";
  ASSERT_EQ(run(tiny(4, 1) + " --no-figures --out " + out).exit_code, 0);
  fs::remove(out + "/run.json");
  const std::string checkpoint = read(out + "/checkpoint.agt");
  expect_one_line_error(run(tiny(4, 2) + " --out " + out),
                        "holds an unfinished run (its checkpoint is at step 4) of another "
                        "configuration (seed: 1 there, 2 here)");
  EXPECT_EQ(read(out + "/checkpoint.agt"), checkpoint);
}

// --resume continues a run in its own folder (the steps may grow), keeping the checkpoint it
// continues until it saves; it saves as often as the run it continues did (a resumed run used
// to fall back to every 500 steps), unless --save-every says otherwise.
TEST(CliFolders, ResumeInItsOwnFolderKeepsSaveEvery) {
  const std::string dir = temp_dir("resume"), out = dir + "/run";
  ASSERT_EQ(run(tiny(4, 1) + " --save-every 3 --out " + out).exit_code, 0);
  auto saved_every = [&] {
    return ag::load_tensor_file(out + "/checkpoint.agt").metadata.at("save_every");
  };
  EXPECT_EQ(saved_every(), "3");
  const Outcome resumed =
      run("train --quiet --no-figures --resume " + out + "/checkpoint.agt --steps 8 --out " + out);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(saved_every(), "3");
  EXPECT_FALSE(fs::exists(out + "/attention.png")) << "a figure of the 4-step model is stale";
  const Outcome told = run("train --quiet --no-figures --resume " + out +
                           "/checkpoint.agt --steps 10 --save-every 7 --out " + out);
  ASSERT_EQ(told.exit_code, 0) << told.output;
  EXPECT_EQ(saved_every(), "7");
  // Resuming into a folder that holds another run is refused as any run is.
  ASSERT_EQ(run(tiny(4, 5) + " --no-figures --out " + dir + "/other").exit_code, 0);
  expect_one_line_error(
      run("train --quiet --resume " + out + "/checkpoint.agt --steps 12 --out " + dir + "/other"),
      "seed: 5 there, 1 here");
}

// run.json that is a folder (or anything but a file) is named, not a bare
// "basic_filebuf::underflow error".
TEST(CliFolders, RunJsonThatIsAFolderIsNamed) {
  const std::string dir = temp_dir("run_json_folder"), out = dir + "/run";
  fs::create_directories(out + "/run.json");
  expect_one_line_error(run(tiny(4, 1) + " --out " + out),
                        "run summary '" + out + "/run.json' is not a regular file");
  const std::string table = dir + "/table";
  ASSERT_EQ(run("table --encodings none --tasks shiftk --steps 2 --out " + table).exit_code, 0);
  fs::remove(table + "/none-shiftk-l1/run.json");
  fs::create_directories(table + "/none-shiftk-l1/run.json");
  expect_one_line_error(
      run("table --encodings none --tasks shiftk --steps 2 --reuse --out " + table),
      "none-shiftk-l1/run.json' is not a regular file");
}

// run.json values outside their range are refused, not reused: an accuracy of 7.5 was
// printed as 750.0%.
TEST(CliFolders, RunJsonValuesOutsideTheirRangeAreRefused) {
  const std::string dir = temp_dir("run_json_range");
  const std::string table = "table --encodings none --tasks shiftk --steps 2 --reuse --out " + dir;
  ASSERT_EQ(run(table).exit_code, 0);
  const std::string path = dir + "/none-shiftk-l1/run.json";
  nlohmann::json good;
  {
    std::ifstream in(path);
    good = nlohmann::json::parse(in);
  }
  const std::string length = good["final"].begin().key();
  for (const auto& [field, value, error] :
       std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"accuracy", 7.5, "accuracy at length 32 is 7.5, outside 0 .. 1"},
           {"accuracy", -0.5, "accuracy at length 32 is -0.5"},
           {"loss", -1, "loss at length 32 is -1"},
           {"scored_tokens", 0, "scored_tokens at length 32 is 0"}}) {
    nlohmann::json bad = good;
    bad["final"][length][field] = value;
    std::ofstream(path) << bad.dump();
    const Outcome o = run(table);
    expect_one_line_error(o, error);
    EXPECT_EQ(o.output.find("%"), std::string::npos) << o.output;
  }
  nlohmann::json bad = good;
  bad["train_seconds"] = -3;
  std::ofstream(path) << bad.dump();
  expect_one_line_error(run(table), "train_seconds is -3");
}

// A checkpoint whose weights hold NaN (its checksum right) evaluated to "loss nan" with exit
// status 0: every command that loads it refuses it, naming the tensor.
TEST(CliFolders, CheckpointWithNonFiniteWeightsIsRefused) {
  const std::string dir = temp_dir("nan");
  ASSERT_EQ(run(tiny(4, 1) + " --no-figures --out " + dir + "/run").exit_code, 0);
  ag::TensorFile file = ag::load_tensor_file(dir + "/run/checkpoint.agt");
  std::vector<double> values = file.tensors[0].second.to_vector();
  values[1] = std::nan("");
  file.tensors[0].second =
      ag::from_vector(values, file.tensors[0].second.shape(), file.tensors[0].second.dtype());
  const std::string crafted = dir + "/nan.agt";
  ag::save_tensors(crafted, file.tensors, file.metadata);
  const std::string tensor = "tensor '" + file.tensors[0].first + "' holds nan at index 1";
  for (const std::string& command :
       {"eval " + crafted, "heatmap " + crafted + " --out " + dir + "/h.png",
        "generate " + crafted + " --prompt a --tokens 2",
        "train --quiet --resume " + crafted + " --out " + dir + "/more",
        tiny(4, 1) + " --init " + crafted + " --out " + dir + "/tuned"})
    expect_one_line_error(run(command), tensor);
  EXPECT_FALSE(fs::exists(dir + "/more"));
  EXPECT_FALSE(fs::exists(dir + "/tuned"));
}

// The fault test of a full disk while a figure is written: a 64 KB tmpfs, filled but for a
// few KB, holding an earlier figure. `pe heatmap` fails in one line with a non-zero exit; the
// earlier figure under the final name is untouched, and no temporary file is left.
TEST(CliFolders, FullDiskWhileAFigureIsWrittenLeavesNoPartialFile) {
  const std::string dir = temp_dir("full_disk");
  ASSERT_EQ(run(tiny(4, 1) + " --out " + dir + "/run").exit_code, 0);
  const std::string earlier = read(dir + "/run/attention.png");
  const std::string full = dir + "/full";
  fs::create_directories(full);
  if (mount("tmpfs", full.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root, as in CI): "
                 << std::strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { umount(path.c_str()); }
  } unmount{full};
  std::ofstream(full + "/figure.png", std::ios::binary) << earlier;
  auto fill = [&] {  // the disk full but for 2 KB
    struct statvfs disk {};
    ASSERT_EQ(statvfs(full.c_str(), &disk), 0);
    const std::size_t free = std::size_t(disk.f_bavail) * disk.f_frsize;
    if (free > 2048)
      std::ofstream(full + "/filler", std::ios::binary | std::ios::app)
          << std::string(free - 2048, 'x');
  };
  fill();
  for (const std::string& command :
       {"heatmap " + dir + "/run/checkpoint.agt --out " + full + "/figure.png",
        "eval " + dir + "/run/checkpoint.agt --lengths 8,12,16 --plot " + full + "/figure.png"}) {
    const Outcome o = run(command);
    expect_one_line_error(o, "figure.png");
    EXPECT_EQ(read(full + "/figure.png"), earlier) << command << ": the earlier figure changed";
    EXPECT_EQ(names_in(full), (std::vector<std::string>{"figure.png", "filler"})) << command;
  }
  fs::remove(full + "/figure.png");  // now a partial figure could land under the final name
  fill();
  const Outcome o = run("heatmap " + dir + "/run/checkpoint.agt --out " + full + "/figure.png");
  expect_one_line_error(o, "figure.png");
  EXPECT_EQ(names_in(full), std::vector<std::string>{"filler"});
}

// OMP_NUM_THREADS=100000 crashed in libgomp: a count above the cores is capped with a note,
// and one that is not a number is dropped with a note; the run itself goes on.
TEST(CliFolders, ThreadCountAboveTheCoresIsCappedWithANote) {
  const std::string dir = temp_dir("threads");
  for (const char* threads : {"100000", "99999999999999999999999", "abc"}) {
    setenv("OMP_NUM_THREADS", threads, 1);
    const Outcome o =
        run("train --width 64 --ffn 256 --steps 2 --quiet --no-figures --overwrite "
            "--out " +
            dir);
    unsetenv("OMP_NUM_THREADS");
    EXPECT_EQ(o.exit_code, 0) << threads << ": " << o.output;
    EXPECT_NE(o.output.find(std::string("note: OMP_NUM_THREADS=") +
                            (threads[0] == 'a' ? "'abc' is not a positive whole number" : threads)),
              std::string::npos)
        << o.output;
  }
  expect_one_line_error(
      run("table --encodings none --tasks shiftk --steps 2 --jobs 1000001 --out " + dir),
      "--jobs: expected a whole number from 0 to 1000000");
  const Outcome capped =
      run("table --encodings none --tasks shiftk --steps 2 --jobs 100000 --out " + dir + "/t");
  EXPECT_EQ(capped.exit_code, 0) << capped.output;
  EXPECT_NE(capped.output.find("note: --jobs 100000 is more than the"), std::string::npos)
      << capped.output;
}
