// `pe table`'s configurations. The fast one is pinned to the values whose 16 rows were run and
// compared with the full table (seeds 1 and 2, table.hpp): a change to any of them means
// running `pe table --fast` again and checking every row's verdict before changing this test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ag/error.hpp"
#include "lab/table.hpp"

namespace {

pe::TableOptions with_fast(bool fast) {
  pe::TableOptions options;
  options.fast = fast;
  options.seed = 7;
  options.steps = 1234;
  return options;
}

}  // namespace

TEST(Table, FullRowIsTheReferenceRunWithTheTablesStepsAndSeed) {
  const pe::TrainConfig row = pe::table_config(with_fast(false), "rope", "alternating", 3);
  pe::TrainConfig expected;
  expected.encoding = "rope";
  expected.task = "alternating";
  expected.model.layers = 3;
  expected.seed = 7;
  expected.steps = 1234;
  EXPECT_EQ(pe::config_to_json(row), pe::config_to_json(expected));
}

TEST(Table, FastConfigurationIsTheVerifiedOne) {
  const pe::TrainConfig c = pe::table_config(with_fast(true), "t5", "shiftk", 1);
  EXPECT_EQ(c.model.width, 64);
  EXPECT_EQ(c.model.ffn_width, 256);
  EXPECT_EQ(c.steps, 400);  // the table's own --steps does not apply
  EXPECT_EQ(c.warmup, 50);
  EXPECT_DOUBLE_EQ(c.lr, 5e-3);
  EXPECT_EQ(c.eval_every, 50);
  EXPECT_EQ(c.eval_sequences, 64);
}

// Everything else is the reference run, so that a fast verdict means what a full one means.
TEST(Table, FastKeepsEverythingElseOfTheReferenceRun) {
  pe::TrainConfig c = pe::table_config(with_fast(true), "t5", "shiftk", 1);
  const pe::TrainConfig reference = pe::table_config(with_fast(false), "t5", "shiftk", 1);
  EXPECT_EQ(c.encoding, "t5");
  EXPECT_EQ(c.task, "shiftk");
  EXPECT_EQ(c.seed, 7u);
  c.model.width = reference.model.width;
  c.model.ffn_width = reference.model.ffn_width;
  c.steps = reference.steps;
  c.warmup = reference.warmup;
  c.lr = reference.lr;
  c.eval_every = reference.eval_every;
  c.eval_sequences = reference.eval_sequences;
  EXPECT_EQ(pe::config_to_json(c), pe::config_to_json(reference));
}

TEST(Table, FastNoteSaysWhatItIsAndNamesItsConfiguration) {
  const std::string note = pe::fast_table_note();
  for (const char* part : {"quick look", "width 64", "feed-forward 256", "400 steps", "0.005",
                           "64 held-out", "full table"})
    EXPECT_NE(note.find(part), std::string::npos) << part << " not in: " << note;
}

// The default table is Part I's (chapters up to 8: the 16 rows the README and the chapters
// quote); --part 2 is chapter 9 on, --part all everything, each in registration order.
TEST(Table, PartsSplitAtChapter9) {
  std::vector<pe::EncodingEntry> registered;
  for (const auto& [name, chapter] :
       std::vector<std::pair<std::string, std::string>>{{"none", "01"},
                                                        {"rope", "05"},
                                                        {"alibi", "06"},
                                                        {"kerple", "09"},
                                                        {"later", "12"},
                                                        {"yours", "99"}})
    registered.push_back({name, chapter, "", {}, nullptr});
  using Names = std::vector<std::string>;
  EXPECT_EQ(pe::table_encodings(registered, pe::TablePart::one), (Names{"none", "rope", "alibi"}));
  EXPECT_EQ(pe::table_encodings(registered, pe::TablePart::two),
            (Names{"kerple", "later", "yours"}));
  EXPECT_EQ(pe::table_encodings(registered, pe::TablePart::all).size(), registered.size());
  EXPECT_EQ(pe::TableOptions{}.part, pe::TablePart::one);

  EXPECT_EQ(pe::table_part_from("1"), pe::TablePart::one);
  EXPECT_EQ(pe::table_part_from("2"), pe::TablePart::two);
  EXPECT_EQ(pe::table_part_from("all"), pe::TablePart::all);
  for (const char* bad : {"", "3", "I", "ALL", " 1"})
    EXPECT_THROW(pe::table_part_from(bad), ag::Error) << bad;
  registered.push_back({"odd", "C", "", {}, nullptr});
  EXPECT_THROW(pe::table_encodings(registered, pe::TablePart::one), ag::Error);
}
