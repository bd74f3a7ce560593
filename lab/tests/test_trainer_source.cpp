// A checkpoint carries what it needs to be read back (issue 35): charlm's corpus characters
// and the text's hash (TaskSource), compared by Trainer::resume (nothing may change), by
// Trainer::load (the text may, the characters not) and by Trainer::load_weights (another
// file of the same characters is a fine-tune). Checkpoints without the record read as before.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ag/error.hpp"
#include "ag/io.hpp"
#include "lab/tests/tiny_config.hpp"
#include "lab/trainer.hpp"

namespace pe {
namespace {

std::string text_with_y() {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "yes, yaks yawn at the lazy dog.\n";
  return text;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string swapped(std::string text, char from, char to) {
  for (char& c : text)
    if (c == from) c = to;
  return text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "";
}

TrainConfig charlm_on(const std::string& corpus) {
  TrainConfig c = tiny("charlm");
  c.task_options["corpus"] = corpus;
  c.steps = 2;
  return c;
}

TEST(TaskSource, CharlmKeepsItsCharactersInTokenOrderAndTheTextsHash) {
  const std::string corpus = ::testing::TempDir() + "source_order.txt";
  write(corpus, "cabbage\n");
  const auto task = make_task("charlm", {{"corpus", corpus}});
  const auto source = task->source();
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(source->file, corpus);
  EXPECT_EQ(source->characters, "\nabceg");  // sorted: token t is characters[t]
  EXPECT_EQ(source->text_bytes, 8u);
  write(corpus, "cabbagf\n");
  EXPECT_NE(make_task("charlm", {{"corpus", corpus}})->source()->text_hash, source->text_hash);
  // A task whose tokens are fixed by its code has nothing to keep.
  EXPECT_FALSE(make_task("shiftk")->source().has_value());
}

TEST(TaskSource, CheckSameSourceSaysWhatChangedAndHowMuchMay) {
  const std::string corpus = ::testing::TempDir() + "source_check.txt";
  write(corpus, text_with_y());
  const TaskSource trained = *make_task("charlm", {{"corpus", corpus}})->source();
  const auto check = [&](SourceChange allowed) {
    return error_of([&] {
      check_same_source(*make_task("charlm", {{"corpus", corpus}}), trained, allowed, "FIX");
    });
  };
  EXPECT_EQ(check(SourceChange::none), "");
  write(corpus, "yes " + text_with_y());  // the same characters, another text
  EXPECT_EQ(check(SourceChange::text_only), "");
  const std::string text = check(SourceChange::none);
  EXPECT_NE(text.find("the corpus '" + corpus + "' has changed since the checkpoint was saved"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("; FIX"), std::string::npos) << text;
  write(corpus, swapped(text_with_y(), 'y', '~'));
  const std::string characters = check(SourceChange::text_only);
  EXPECT_NE(characters.find("the corpus '" + corpus +
                            "' has changed since the model was trained: "
                            "'~' new, 'y' missing"),
            std::string::npos)
      << characters;
}

TEST(TaskSource, ResumeAndLoadRefuseACorpusOfOtherCharacters) {
  const std::string dir = ::testing::TempDir();
  const std::string corpus = dir + "source_resume.txt", checkpoint = dir + "source_resume.agt";
  write(corpus, text_with_y());
  Trainer trainer(charlm_on(corpus));
  trainer.step();
  trainer.save(checkpoint);
  const ag::TensorFile file = ag::load_tensor_file(checkpoint);
  const SavedProgress saved = read_saved_progress(file.metadata, checkpoint);
  ASSERT_TRUE(saved.task_source.has_value());
  EXPECT_EQ(saved.task_source->characters, trainer.task().source()->characters);
  EXPECT_EQ(saved.task_source->text_hash, trainer.task().source()->text_hash);
  EXPECT_NO_THROW(Trainer::resume(checkpoint));

  write(corpus, "yes " + text_with_y());  // other text: a model to use, not a run to continue
  EXPECT_NO_THROW(Trainer::load(checkpoint));
  EXPECT_NE(error_of([&] { Trainer::resume(checkpoint); }).find("another text"), std::string::npos);

  write(corpus, swapped(text_with_y(), 'y', '~'));
  for (const auto& message : {error_of([&] { Trainer::load(checkpoint); }),
                              error_of([&] { Trainer::resume(checkpoint); })})
    EXPECT_NE(message.find("'" + corpus + "' has changed since the model was trained"),
              std::string::npos)
        << message;
}

TEST(TaskSource, LoadWeightsTakesAnotherTextOfTheSameCharactersOnly) {
  const std::string dir = ::testing::TempDir();
  const std::string corpus = dir + "source_init.txt", checkpoint = dir + "source_init.agt";
  const std::string same = dir + "source_init_same.txt", other = dir + "source_init_other.txt";
  write(corpus, text_with_y());
  write(same, "yes " + text_with_y());
  write(other, swapped(text_with_y(), 'y', '~'));
  Trainer(charlm_on(corpus)).save(checkpoint);
  Trainer fine_tune(charlm_on(same));
  EXPECT_NO_THROW(fine_tune.load_weights(checkpoint));
  Trainer refused(charlm_on(other));
  const std::string message = error_of([&] { refused.load_weights(checkpoint); });
  EXPECT_NE(message.find("the corpus '" + other + "' is not the text the model was trained on ('" +
                         corpus + "')"),
            std::string::npos)
      << message;
}

// A checkpoint of an older version has no task_source: it reads as before, and a corpus of
// another size is named instead of the embedding's shape.
TEST(TaskSource, CheckpointsWithoutTheRecordReadAsBefore) {
  const std::string dir = ::testing::TempDir();
  const std::string corpus = dir + "source_old.txt", checkpoint = dir + "source_old.agt";
  write(corpus, text_with_y());
  Trainer(charlm_on(corpus)).save(checkpoint);
  ag::TensorFile file = ag::load_tensor_file(checkpoint);
  ASSERT_EQ(file.metadata.erase("task_source"), 1u);
  ag::save_tensors(checkpoint, file.tensors, file.metadata);
  write(corpus, swapped(text_with_y(), 'y', '~'));  // as many characters: not detectable
  EXPECT_NO_THROW(Trainer::resume(checkpoint));
  write(corpus, text_with_y() + "0123");
  const std::string message = error_of([&] { Trainer::load(checkpoint); });
  EXPECT_NE(message.find("holds a model of"), std::string::npos) << message;
  EXPECT_NE(message.find(corpus), std::string::npos) << message;
}

TEST(TaskSource, AMalformedRecordIsRefusedNamingIt) {
  const std::string dir = ::testing::TempDir();
  const std::string corpus = dir + "source_bad.txt", checkpoint = dir + "source_bad.agt";
  write(corpus, text_with_y());
  Trainer(charlm_on(corpus)).save(checkpoint);
  const ag::Metadata good = ag::load_tensor_file(checkpoint).metadata;
  ASSERT_NO_THROW(read_saved_progress(good, checkpoint));
  const std::string file = "\"file\": \"x\"", bytes = "\"text_bytes\": 4",
                    hash = "\"text_fnv1a\": \"00000000000000ff\"";
  for (const std::string& bad :
       {std::string("[]"), std::string("not json"),
        "{" + file + ", \"characters\": [98, 97], " + bytes + ", " + hash + "}",
        "{" + file + ", \"characters\": [97, 97], " + bytes + ", " + hash + "}",
        "{" + file + ", \"characters\": [256], " + bytes + ", " + hash + "}",
        "{" + file + ", \"characters\": [], " + bytes + ", " + hash + "}",
        "{" + file + ", \"characters\": [97], " + bytes + ", \"text_fnv1a\": \"ff\"}",
        "{" + file + ", \"characters\": [97], " + bytes + ", \"text_fnv1a\": \"-0000000000000ff\"}",
        "{" + file + ", \"characters\": [97], \"text_bytes\": -1, " + hash + "}",
        "{" + file + ", \"characters\": [97], " + bytes + "}"}) {
    ag::Metadata metadata = good;
    metadata["task_source"] = bad;
    const std::string message = error_of([&] { read_saved_progress(metadata, checkpoint); });
    EXPECT_NE(message.find("task_source"), std::string::npos) << bad << ": " << message;
  }
  ag::Metadata fine = good;
  fine["task_source"] = "{" + file + ", \"characters\": [97, 98], " + bytes + ", " + hash + "}";
  EXPECT_EQ(read_saved_progress(fine, checkpoint).task_source->characters, "ab");
}

}  // namespace
}  // namespace pe
