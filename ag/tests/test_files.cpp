// Files that could hurt: a checkpoint whose sizes lie, a pipe, a device, a folder, a shape whose
// element count overflows. Each is a one-line error, never a hang or an allocation of the
// machine's memory; and a write never leaves half a file under the final name.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>  // makedev
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

// --- destinations in a shared folder: nothing but a regular file is replaced, no link is
// followed, and nothing planted under a temporary's name is touched ---------------------

namespace {
// An empty folder for one test.
fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::path(temp_path(name));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

std::string contents(const fs::path& path) { return read_file(path.string(), 1 << 20, "a file"); }
}  // namespace

TEST(Files, AnAtomicWriteRefusesAPipeAndLeavesItAPipe) {
  const fs::path folder = fresh_folder("dest_fifo");
  const fs::path fifo = folder / "out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string message = error_of([&] { write_file_atomically(fifo.string(), "{}"); });
  EXPECT_NE(message.find("pipe"), std::string::npos) << message;
  EXPECT_NE(message.find(fifo.string()), std::string::npos) << message;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

TEST(Files, AnAtomicWriteRefusesADeviceAndLeavesItADevice) {
  // Root makes its own null device in the test's folder (a regression would otherwise replace
  // the system's /dev/null); anyone else cannot replace /dev/null, and the message tells
  // whether the check refused it or the write merely failed.
  const fs::path folder = fresh_folder("dest_device");
  fs::path device = "/dev/null";
  if (::geteuid() == 0) {
    device = folder / "mynull";
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      GTEST_SKIP() << "root cannot make a device node here: " << std::strerror(errno);
  }
  const std::string message = error_of([&] { write_file_atomically(device.string(), "x"); });
  EXPECT_NE(message.find("character device"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(device))) << device;
}

TEST(Files, AnAtomicWriteRefusesASymbolicLinkAndLeavesItsTargetAlone) {
  const fs::path folder = fresh_folder("dest_link");
  write_file_atomically((folder / "victim").string(), "precious");
  fs::create_symlink(folder / "victim", folder / "out.json");
  const std::string message =
      error_of([&] { write_file_atomically((folder / "out.json").string(), "new"); });
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_symlink(folder / "out.json"));
  EXPECT_EQ(contents(folder / "victim"), "precious");
  // a folder is refused by name too (it used to fail only at the rename)
  EXPECT_NE(error_of([&] { write_file_atomically(folder.string(), "x"); }).find("a folder"),
            std::string::npos);
}

TEST(Files, ALinkPlantedUnderTheTemporaryNameIsNeitherFollowedNorRemoved) {
  const fs::path folder = fresh_folder("planted_temporary");
  const fs::path out = folder / "run.json";
  write_file_atomically((folder / "victim").string(), "precious");
  const fs::path planted = out.string() + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(folder / "victim", planted);
  write_file_atomically(out.string(), "new contents");
  EXPECT_EQ(contents(out), "new contents");
  EXPECT_EQ(contents(folder / "victim"), "precious");
  EXPECT_TRUE(fs::is_symlink(planted)) << "not this process's file: it stays";
  // the temporary took another name ending in ".tmp.<pid>", and is gone
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 3);
  // a regular file someone left there is not truncated either
  fs::remove(planted);
  write_file_atomically(planted.string(), "someone else's");
  write_file_atomically(out.string(), "newer");
  EXPECT_EQ(contents(out), "newer");
  EXPECT_EQ(contents(planted), "someone else's");
}
