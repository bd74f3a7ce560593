// The `pe` command line against bad input, kills and full disks: every bad input is refused in
// one line before any work and leaves no folder behind; a run killed at any moment resumes to
// exactly the uninterrupted result; a failed write is an error, never a 0-byte file and exit 0.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ag/io.hpp"
#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::Outcome;
using pe_test::run;
using pe_test::start;

std::string temp_dir(const std::string& name) { return pe_test::fresh_dir("pe_robust_" + name); }

const std::string& kTiny = pe_test::kTinyTrain;

// Every tensor of two checkpoints, bit for bit (the metadata holds wall times, which differ).
void expect_same_tensors(const std::string& a, const std::string& b) {
  const ag::TensorFile x = ag::load_tensor_file(a), y = ag::load_tensor_file(b);
  ASSERT_EQ(x.tensors.size(), y.tensors.size());
  for (std::size_t i = 0; i < x.tensors.size(); ++i) {
    EXPECT_EQ(x.tensors[i].first, y.tensors[i].first);
    EXPECT_EQ(x.tensors[i].second.to_vector(), y.tensors[i].second.to_vector())
        << x.tensors[i].first;
  }
  EXPECT_EQ(x.metadata.at("steps_done"), y.metadata.at("steps_done"));
  EXPECT_EQ(x.metadata.at("data_rng"), y.metadata.at("data_rng"));
}

}  // namespace

// Each bad command line, the one line it must be refused with, and no output folder left.
TEST(CliRobustness, BadInputsAreRefusedInOneLineBeforeAnyWork) {
  const std::string dir = temp_dir("bad");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const struct {
    std::string args, error;
  } cases[] = {
      {"--lr inf", "--lr: expected a finite number above 0, got 'inf'"},
      {"--lr nan", "--lr: expected a finite number above 0, got 'nan'"},
      {"--clip inf", "--clip: expected a finite number above 0, got 'inf'"},
      {"--weight-decay inf", "--weight-decay: expected a finite number of at least 0, got 'inf'"},
      {"-e sinusoidal -o base=inf", "sinusoidal: option base must be a finite number, got 'inf'"},
      {"--steps 99999999999999999999",
       "--steps: expected a whole number from 0 to 1000000000, got '99999999999999999999'"},
      {"--steps 1e5", "--steps: expected a whole number from 0 to 1000000000, got '1e5'"},
      {"--seed -5", "--seed: expected a whole number from 0 to 18446744073709551615, got '-5'"},
      {"--eval-lengths 3", "evaluation length 3 is outside 5 .. 100000 (task shiftk)"},
      {"--eval-lengths 100000", "memory: evaluating at length 100000 needs about"},
      {"--eval-lengths 200000",
       "--eval-lengths: expected a whole number from 1 to 100000, got '200000'"},
      {"--batch 100000 --width 256 --ffn 1024", "memory: training this configuration needs about"},
      {"-e shaw -o pairwise=true --length 4096 --width 256 --ffn 1024",
       "memory: training this configuration needs about"},
      {"--layers 1000000", "--layers: expected a whole number from 1 to 64, got '1000000'"},
      {"--save-every -1", "--save-every"},
      {"--max-length 1000000",
       "--max-length: expected a whole number from 0 to 100000, got '1000000'"},
      {"--task charlm --task-option corpus=/dev/zero", "is not a regular file"},
      {"--task charlm --task-option corpus=" + fifo, "is not a regular file"},
      {"--task charlm --task-option corpus=" + dir, "is not a regular file"},
      {"--task flipflop --task-option ignore=1.5",
       "task flipflop: option ignore must be a number p with 0 <= p < 1, got '1.5'"},
      {"--task flipflop --task-option bogus=1",
       "task flipflop has no option 'bogus' (it accepts: ignore)"},
      {"--task selcopy --task-option count=0",
       "task selcopy: option count must be an integer from 1 to 1000, got '0'"},
      {"--task counting --task-option vars=9",
       "task counting: option vars must be an integer from 1 to 8, got '9'"},
      // A task's own length rules, for training and evaluation alike, before any step.
      {"--task flipflop --length 9", "task flipflop needs an even length"},
      {"--task flipflop --eval-lengths 8,9", "task flipflop needs an even length"},
      {"--task selcopy --length 16", "task selcopy cannot make sequences of length 16"},
  };
  for (const auto& bad : cases) {
    // Options given twice are an error of their own: the case's value replaces the default.
    std::string args = kTiny;
    for (const char* flag : {"--batch", "--steps", "--length", "--width", "--ffn"})
      if (bad.args.find(std::string(flag) + " ") != std::string::npos) {
        const auto at = args.find(std::string(flag) + " ");
        if (at != std::string::npos)
          args.erase(at, args.find(' ', at + std::string(flag).size() + 1) - at);
      }
    const std::string out = dir + "/run";
    const Outcome o = run(args + " " + bad.args + " --out " + out);
    EXPECT_GT(o.exit_code, 0) << bad.args << ": " << o.output;
    EXPECT_EQ(o.lines(), 1) << bad.args << ": " << o.output;
    EXPECT_NE(o.output.find(bad.error), std::string::npos) << bad.args << ": " << o.output;
    EXPECT_FALSE(fs::exists(out)) << bad.args << " left " << out;
    fs::remove_all(out);
  }
}

// A crafted checkpoint (valid checksum, an empty history entry) crashed pe eval, heatmap and
// train --resume; now each refuses it in one line.
TEST(CliRobustness, CraftedCheckpointIsRefusedByEveryCommand) {
  const std::string dir = temp_dir("crafted");
  ASSERT_EQ(run(kTiny + " --out " + dir + "/run").exit_code, 0);
  ag::TensorFile file = ag::load_tensor_file(dir + "/run/checkpoint.agt");
  file.metadata["history"] = "[[]]";
  const std::string crafted = dir + "/crafted.agt";
  ag::save_tensors(crafted, file.tensors, file.metadata);
  for (const std::string& command :
       {"eval " + crafted, "heatmap " + crafted + " --out " + dir + "/h.png",
        "train --quiet --resume " + crafted + " --out " + dir + "/more"}) {
    const Outcome o = run(command);
    EXPECT_EQ(o.exit_code, 1) << command << ": " << o.output;
    EXPECT_EQ(o.lines(), 1) << o.output;
    EXPECT_NE(o.output.find("history entry 0 is not a list of 6 numbers"), std::string::npos)
        << o.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/more"));
}

// --lr 1e3 used to train on in NaN and write a checkpoint that could not be read back.
TEST(CliRobustness, DivergenceStopsWithTheStepAndKeepsTheLastGoodCheckpoint) {
  const std::string dir = temp_dir("diverge");
  const Outcome o =
      run("train --width 16 --ffn 32 --length 8 --batch 4 --steps 200 --warmup 0 "
          "--lr 1e3 --quiet --no-figures --save-every 2 --out " +
          dir);
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_EQ(o.lines(), 1) << o.output;
  EXPECT_NE(o.output.find("training diverged at step "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("the last good checkpoint"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(dir + "/run.json"));
  EXPECT_EQ(run("eval " + dir + "/checkpoint.agt").exit_code, 0);
}

// SIGKILL at several moments of a run that saves after every step (so that most kills land in
// or near a save): the checkpoint under the final name always reads back, and resuming from
// it gives, bit for bit, the tensors of the uninterrupted run.
TEST(CliRobustness, KilledRunsResumeToTheUninterruptedResult) {
  const std::string dir = temp_dir("kill");
  const std::string config =
      "train --width 32 --ffn 64 --length 12 --batch 8 --steps 120 --warmup 5 --eval-every 40 "
      "--eval-sequences 16 --quiet --no-figures";
  ASSERT_EQ(run(config + " --save-every 0 --out " + dir + "/straight").exit_code, 0);
  int killed = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::string out = dir + "/killed" + std::to_string(attempt);
    const pid_t pid = start(config + " --save-every 1 --out " + out);
    ASSERT_GT(pid, 0);
    // Wait for the first checkpoint, then a little longer: a different moment each attempt.
    for (int i = 0; i < 2000 && !fs::exists(out + "/checkpoint.agt"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * attempt));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status)) continue;  // it finished first: nothing to test this time
    ++killed;
    ASSERT_TRUE(fs::exists(out + "/checkpoint.agt"));
    EXPECT_FALSE(fs::exists(out + "/run.json"));  // an unfinished run is not complete
    const Outcome resumed =
        run("train --quiet --no-figures --resume " + out + "/checkpoint.agt --out " + out);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    expect_same_tensors(dir + "/straight/checkpoint.agt", out + "/checkpoint.agt");
    for (const auto& entry : fs::directory_iterator(out))  // the killed save's temporary is gone
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
  if (killed == 0) GTEST_SKIP() << "every run finished before it could be killed";
}

// A disk that fills up during the run (a 160 KB tmpfs: the checkpoint does not fit) and a
// read-only folder: both are one-line errors with a non-zero exit, found before training for
// the read-only folder, and no file is left half written under its final name.
TEST(CliRobustness, FullDiskAndReadOnlyFolderAreErrors) {
  const std::string dir = temp_dir("disk");
  const std::string full = dir + "/full", readonly = dir + "/readonly";
  fs::create_directories(full);
  fs::create_directories(readonly);
  if (mount("tmpfs", full.c_str(), "tmpfs", 0, "size=160k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << std::strerror(errno);
  const bool readonly_mounted =
      mount("tmpfs", readonly.c_str(), "tmpfs", MS_RDONLY, "size=16k") == 0;

  const Outcome o =
      run("train --width 64 --ffn 256 --length 8 --batch 4 --steps 2 --warmup 1 "
          "--quiet --no-figures --out " +
          full + "/run");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_EQ(o.lines(), 1) << o.output;
  EXPECT_NE(o.output.find("No space left on device"), std::string::npos) << o.output;
  std::vector<std::string> left;
  if (fs::exists(full + "/run"))
    for (const auto& entry : fs::directory_iterator(full + "/run"))
      left.push_back(entry.path().filename());
  EXPECT_TRUE(left.empty()) << left.size() << " files left, the first " << left[0];

  if (readonly_mounted) {
    const Outcome ro = run(kTiny + " --out " + readonly);
    EXPECT_EQ(ro.exit_code, 1) << ro.output;
    EXPECT_NE(ro.output.find("cannot write into the output folder"), std::string::npos)
        << ro.output;
    umount(readonly.c_str());
  }
  umount(full.c_str());
}

// `pe table --reuse` takes a finished run only when its checkpoint reads back: a 0-byte one (a
// full disk, a kill in an older version) means training the run again.
TEST(CliRobustness, ReuseRetrainsARunWhoseCheckpointIsBroken) {
  const std::string dir = temp_dir("reuse");
  const std::string table = "table --encodings none --tasks shiftk --steps 3 --out " + dir;
  ASSERT_EQ(run(table).exit_code, 0);
  const Outcome reused = run(table + " --reuse");
  ASSERT_EQ(reused.exit_code, 0) << reused.output;
  EXPECT_NE(reused.output.find("(reused)"), std::string::npos) << reused.output;
  std::ofstream(dir + "/none-shiftk-l1/checkpoint.agt", std::ios::trunc).close();
  const Outcome again = run(table + " --reuse");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("(reused)"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("not reusing"), std::string::npos) << again.output;
  EXPECT_GT(fs::file_size(dir + "/none-shiftk-l1/checkpoint.agt"), 0u);
}
