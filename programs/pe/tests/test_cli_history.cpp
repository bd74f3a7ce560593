// A run's identity includes its history (issue 35): a resume into another folder, a fine-tune
// and a plain run over a fine-tune never replace a finished run without --overwrite; pe table
// --reuse takes only runs trained from scratch; --steps 0 is an untrained baseline; the errors of
// a resumed run and of a --length too short for the task say what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ag/io.hpp"
#include "programs/pe/tests/run_pe.hpp"

namespace {

namespace fs = std::filesystem;
using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string temp_dir(const std::string& name) { return pe_test::fresh_dir("pe_history_" + name); }

// A tiny run of `steps` steps (a few seconds at most).
std::string tiny(int steps) {
  return "train --width 16 --ffn 32 --length 8 --batch 4 --warmup 1 --eval-every 2 "
         "--eval-sequences 8 --quiet --no-figures --steps " +
         std::to_string(steps);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nlohmann::json run_json(const std::string& folder) {
  return nlohmann::json::parse(read(folder + "/run.json"));
}

}  // namespace

// --resume A/checkpoint.agt --steps 20 --out B, where B holds a finished run of the same
// configuration but 20 steps, used to replace B (the steps were ignored when resuming).
TEST(CliHistory, ResumeIntoAFolderThatHoldsARunIsRefused) {
  const std::string dir = temp_dir("resume_other"), a = dir + "/a", b = dir + "/b";
  ASSERT_EQ(run(tiny(4) + " --out " + a).exit_code, 0);
  ASSERT_EQ(run(tiny(6) + " --out " + b).exit_code, 0);
  const std::string before = read(b + "/run.json");
  const Outcome o =
      run("train --quiet --no-figures --resume " + a + "/checkpoint.agt --steps 6 --out " + b);
  expect_one_line_error(o,
                        "holds a finished run of this configuration; --resume continues the "
                        "run of '" +
                            a +
                            "/checkpoint.agt' as a copy only into a folder that "
                            "holds no run");
  EXPECT_NE(o.output.find("--overwrite"), std::string::npos) << o.output;
  EXPECT_EQ(read(b + "/run.json"), before);
  // --overwrite replaces it, and the copy says where it came from
  const Outcome forced = run("train --quiet --no-figures --overwrite --resume " + a +
                             "/checkpoint.agt --steps 6 --out " + b);
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(forced.output.find("as a copy"), std::string::npos) << forced.output;
  const nlohmann::json lineage = run_json(b)["lineage"];
  ASSERT_EQ(lineage.size(), 2u) << lineage.dump();
  EXPECT_EQ(lineage[1]["resumed_from"], a + "/checkpoint.agt");
  EXPECT_EQ(lineage[1]["other_folder"], true);
  // the source run is left as it was
  EXPECT_EQ(run_json(a)["config"]["steps"], 4);
}

// --init X/checkpoint.agt --out X replaced X's run with its own fine-tune; and a plain rerun
// then replaced the fine-tune (init_from took no part in the comparison).
TEST(CliHistory, FineTunesAndRunsFromScratchDoNotReplaceEachOther) {
  const std::string dir = temp_dir("fine_tune"), x = dir + "/x", y = dir + "/y";
  ASSERT_EQ(run(tiny(4) + " --out " + x).exit_code, 0);
  const std::string checkpoint = read(x + "/checkpoint.agt");
  expect_one_line_error(run(tiny(4) + " --init " + x + "/checkpoint.agt --out " + x),
                        "--init '" + x +
                            "/checkpoint.agt' is the checkpoint of the run that "
                            "--out '" +
                            x + "' holds");
  EXPECT_EQ(read(x + "/checkpoint.agt"), checkpoint);

  ASSERT_EQ(run(tiny(4) + " --init " + x + "/checkpoint.agt --out " + y).exit_code, 0);
  EXPECT_EQ(run_json(y)["init_from"], x + "/checkpoint.agt");
  const std::string tuned = read(y + "/run.json");
  expect_one_line_error(run(tiny(4) + " --out " + y),
                        "holds a finished run of this configuration, fine-tuned from '" + x +
                            "/checkpoint.agt'; this run trains from scratch; add --overwrite");
  EXPECT_EQ(read(y + "/run.json"), tuned);
  // the same fine-tune again is the same run: it trains, as a plain rerun does
  EXPECT_EQ(run(tiny(4) + " --init " + x + "/checkpoint.agt --out " + y).exit_code, 0);
  // a fine-tune over a run from scratch is refused too
  expect_one_line_error(run(tiny(4) + " --init " + y + "/checkpoint.agt --out " + x),
                        "holds a finished run of this configuration; this run is fine-tuned from");
}

// A fine-tune that was killed and resumed in its own folder is still a fine-tune: the lineage
// travels in the checkpoint.
TEST(CliHistory, AResumedFineTuneKeepsItsHistory) {
  const std::string dir = temp_dir("resumed_fine_tune"), x = dir + "/x", y = dir + "/y";
  ASSERT_EQ(run(tiny(4) + " --out " + x).exit_code, 0);
  ASSERT_EQ(run(tiny(4) + " --init " + x + "/checkpoint.agt --out " + y).exit_code, 0);
  fs::remove(y + "/run.json");  // as a killed run leaves it
  ASSERT_EQ(
      run("train --quiet --no-figures --resume " + y + "/checkpoint.agt --out " + y).exit_code, 0);
  EXPECT_EQ(run_json(y)["init_from"], x + "/checkpoint.agt");
  expect_one_line_error(run(tiny(4) + " --out " + y), "fine-tuned from");
}

// pe table --reuse took a fine-tuned run, or a run whose steps were raised by --resume, as the
// row of a run from scratch ("same configuration"); it is now refused, naming the folder.
TEST(CliHistory, TableReuseTakesOnlyRunsFromScratch) {
  const std::string dir = temp_dir("table"), row = dir + "/table/none-shiftk-l1";
  const std::string table =
      "table --encodings none --tasks shiftk --steps 2 --out " + dir + "/table";
  ASSERT_EQ(run(table).exit_code, 0);
  const nlohmann::json config = run_json(row)["config"];
  ASSERT_EQ(run(table + " --reuse").exit_code, 0);  // a run from scratch is reused

  // the same configuration, fine-tuned from the row's own model, in the row's folder
  const std::string tuned = dir + "/tuned";
  ASSERT_EQ(run("train --quiet --no-figures --steps 2 --length " + config["length"].dump() +
                " --init " + row + "/checkpoint.agt --out " + tuned)
                .exit_code,
            0);
  fs::remove_all(row);
  fs::copy(tuned, row);
  nlohmann::json copied = run_json(row);
  copied["config"] = config;  // exactly the row's configuration, as a fine-tune of it would be
  std::ofstream(row + "/run.json") << copied.dump();
  const std::string before = read(row + "/run.json");
  const Outcome o = run(table + " --reuse");
  expect_one_line_error(o, "the output folder '" + row +
                               "' holds a finished run of this "
                               "configuration, fine-tuned from");
  EXPECT_EQ(read(row + "/run.json"), before) << "the fine-tune was replaced";
  EXPECT_EQ(run(table + " --reuse --overwrite").exit_code, 0);
  EXPECT_FALSE(run_json(row).contains("init_from"));

  // a run whose steps were raised in its own folder is not a 4-step run from scratch
  const std::string extended = dir + "/table/none-shiftk-l1";
  ASSERT_EQ(run("train --quiet --no-figures --resume " + extended +
                "/checkpoint.agt --steps 4 --out " + extended)
                .exit_code,
            0);
  expect_one_line_error(
      run("table --encodings none --tasks shiftk --steps 4 --reuse --out " + dir + "/table"),
      "trained on schedules of 2, then 4 steps (--resume --steps); this run trains from scratch");
}

// A run.json of an older version (no lineage) is a run from scratch, or a fine-tune when it
// says init_from.
TEST(CliHistory, OlderRunJsonWithoutLineageIsRead) {
  const std::string dir = temp_dir("older"), out = dir + "/run";
  ASSERT_EQ(run(tiny(4) + " --out " + out).exit_code, 0);
  nlohmann::json older = run_json(out);
  older.erase("lineage");
  std::ofstream(out + "/run.json") << older.dump();
  EXPECT_EQ(run(tiny(4) + " --out " + out).exit_code, 0) << "the same run again trains";
  older = run_json(out);
  older.erase("lineage");
  older["init_from"] = "somewhere/checkpoint.agt";
  std::ofstream(out + "/run.json") << older.dump();
  expect_one_line_error(run(tiny(4) + " --out " + out),
                        "fine-tuned from 'somewhere/checkpoint.agt'; this run trains from scratch");
}

// --steps 0 (in its documented range) trained and then failed drawing the curves, leaving a
// folder without run.json: it is an untrained baseline, written without curves.
TEST(CliHistory, ZeroStepsIsAnUntrainedBaseline) {
  const std::string dir = temp_dir("zero"), out = dir + "/run";
  const Outcome o =
      run("train --width 16 --ffn 32 --length 8 --batch 4 --eval-sequences 8 "
          "--quiet --steps 0 --out " +
          out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json summary = run_json(out);
  EXPECT_TRUE(summary["history"].empty());
  const double accuracy = summary["final"]["8"]["accuracy"].get<double>();
  EXPECT_GE(accuracy, 0.0);
  EXPECT_LT(accuracy, 0.5) << "an untrained model should be near chance";
  EXPECT_FALSE(fs::exists(out + "/curves.png"));
  EXPECT_TRUE(fs::exists(out + "/checkpoint.agt"));
  EXPECT_EQ(run("eval " + out + "/checkpoint.agt").exit_code, 0);
}

// After --resume, a divergence said "a smaller --lr or --clip may help; no checkpoint was saved
// before it": neither option goes with --resume, and the checkpoint it resumed from is intact.
TEST(CliHistory, DivergenceAfterResumeNamesTheUntouchedCheckpoint) {
  const std::string dir = temp_dir("diverge");
  // saves after every step, so its checkpoint is the last step before the divergence
  const Outcome first =
      run("train --width 16 --ffn 32 --length 8 --batch 4 --steps 200 "
          "--warmup 0 --lr 1e3 --quiet --no-figures --save-every 1 --out " +
          dir);
  ASSERT_EQ(first.exit_code, 1) << first.output;
  ASSERT_NE(first.output.find("training diverged"), std::string::npos) << first.output;
  const std::string checkpoint = dir + "/checkpoint.agt", before = read(checkpoint);
  const std::int64_t step = std::stoll(ag::load_tensor_file(checkpoint).metadata.at("steps_done"));
  // resumed, it meets the same step again (a resume is exact), before any save of its own
  const Outcome o = run("train --quiet --no-figures --resume " + checkpoint + " --out " + dir);
  expect_one_line_error(o, "the checkpoint it resumed from, '" + checkpoint + "' (step " +
                               std::to_string(step) + "), is untouched");
  EXPECT_NE(o.output.find("pe train --init " + checkpoint), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("may help"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("no checkpoint was saved"), std::string::npos) << o.output;
  EXPECT_EQ(read(checkpoint), before);
}

// A run whose first step fails lost nothing: no "no checkpoint was saved before it". A
// fine-tune from weights of 1e30 (finite, so the checkpoint loads) overflows at its first step.
TEST(CliHistory, FailureAtTheFirstStepSaysNothingOfCheckpoints) {
  const std::string dir = temp_dir("first_step");
  ASSERT_EQ(run(tiny(2) + " --out " + dir + "/run").exit_code, 0);
  ag::TensorFile file = ag::load_tensor_file(dir + "/run/checkpoint.agt");
  for (auto& [name, tensor] : file.tensors) {
    std::vector<double> values = tensor.to_vector();
    for (double& v : values) v = 1e30;  // finite in float32; products of two overflow
    tensor = ag::from_vector(values, tensor.shape(), tensor.dtype());
  }
  const std::string huge = dir + "/huge.agt";
  ag::save_tensors(huge, file.tensors, file.metadata);
  const Outcome o = run(tiny(2) + " --init " + huge + " --out " + dir + "/tuned");
  expect_one_line_error(o, "training diverged at step 1");
  EXPECT_EQ(o.output.find("no checkpoint was saved"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(dir + "/tuned"));
}

// "evaluation length 32 is outside 33 .. 100000" for -t shiftk --task-option k=32 and no
// evaluation length: the mistake is --length against k, and the message says so.
TEST(CliHistory, LengthTooShortForTheTaskNamesBothOptions) {
  const std::string dir = temp_dir("short");
  const Outcome o =
      run("train -t shiftk --task-option k=32 --steps 2 --quiet --out " + dir + "/run");
  expect_one_line_error(o,
                        "task shiftk cannot make sequences of length 32 (--length): it needs "
                        "at least 33 tokens with --task-option k=32; give --length 33 or more, "
                        "or change --task-option");
  EXPECT_FALSE(fs::exists(dir + "/run"));
}
