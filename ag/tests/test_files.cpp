// Files that could hurt: a checkpoint whose sizes lie, a pipe, a device, a folder, a shape whose
// element count overflows. Each is a one-line error, never a hang or an allocation of the
// machine's memory; and a write never leaves half a file under the final name.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "ag/files.hpp"
#include "ag/io.hpp"

using namespace ag;
namespace fs = std::filesystem;

namespace {
std::string temp_path(const std::string& name) { return ::testing::TempDir() + name; }

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// A checkpoint with one float32 tensor of the given shape and no values, and a valid
// checksum: only the loader's own checks stand between these sizes and an allocation.
std::string checkpoint_claiming(const Shape& shape) {
  std::string bytes = "AGTENSORS2\n";
  put<std::uint64_t>(bytes, 0);  // metadata entries
  put<std::uint64_t>(bytes, 1);  // tensors
  put<std::uint64_t>(bytes, 1);
  bytes += "w";
  put<std::uint8_t>(bytes, 0);
  put<std::uint64_t>(bytes, shape.size());
  for (auto extent : shape) put<std::int64_t>(bytes, extent);
  std::uint64_t hash = 0xCBF29CE484222325ULL;  // FNV-1a, as the format says
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001B3ULL;
  put<std::uint64_t>(bytes, hash);
  return bytes;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Files, ACheckpointClaimingHugeTensorsIsRefusedBeforeAllocating) {
  const std::string path = temp_path("huge.agt");
  std::ofstream(path, std::ios::binary) << checkpoint_claiming({1 << 30, 1 << 30});
  EXPECT_NE(error_of([&] { load_tensors(path); }).find("truncated"), std::string::npos);
  // 2^40 * 2^40 elements do not fit in 64 bits: the count must not wrap to something small
  std::ofstream(path, std::ios::binary) << checkpoint_claiming({1LL << 40, 1LL << 40});
  EXPECT_NE(error_of([&] { load_tensors(path); }).find("too many elements"), std::string::npos);
}

TEST(Files, AShapeWhoseElementCountOverflowsIsAnError) {
  const std::string too_many = error_of([] { zeros({1LL << 40, 1LL << 40}); });
  EXPECT_NE(too_many.find("too many elements"), std::string::npos);
  EXPECT_NE(error_of([] { numel({4, -1}); }).find("negative"), std::string::npos);
}

TEST(Files, PipesDevicesAndFoldersAreRefusedWithoutReading) {
  const std::string fifo = temp_path("checkpoint.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // opening a FIFO for reading would block until a writer comes: the error must come first
  EXPECT_NE(error_of([&] { load_tensors(fifo); }).find("not a regular file"), std::string::npos);
  ::unlink(fifo.c_str());
  EXPECT_NE(error_of([] { load_tensors("/dev/zero"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_tensors("/tmp"); }).find("not a regular file"), std::string::npos);
  EXPECT_NE(error_of([] { load_tensors("/nonexistent/x.agt"); }).find("/nonexistent/x.agt"),
            std::string::npos);
}

TEST(Files, AFileLargerThanTheLimitIsRefusedWithBothSizes) {
  const std::string path = temp_path("ten_bytes.txt");
  write_file_atomically(path, "0123456789");
  EXPECT_EQ(read_file(path, 10, "a test file"), "0123456789");
  const std::string message = error_of([&] { read_file(path, 9, "a test file"); });
  EXPECT_NE(message.find("10 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("9 allowed"), std::string::npos) << message;
}

TEST(Files, AnAtomicWriteReplacesTheFileWholeAndLeavesNoTemporary) {
  const fs::path folder = fs::path(temp_path("atomic"));
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string path = (folder / "out.json").string();
  write_file_atomically(path, "old");
  write_file_atomically(path, "new contents");
  EXPECT_EQ(read_file(path, 100, "the output"), "new contents");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

TEST(Files, AWriteIntoAMissingFolderIsAnErrorNamingTheFile) {
  const std::string message =
      error_of([] { write_file_atomically("/nonexistent/dir/run.json", "{}"); });
  EXPECT_NE(message.find("/nonexistent/dir/run.json"), std::string::npos) << message;
}
