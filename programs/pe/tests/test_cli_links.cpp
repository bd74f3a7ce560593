// Files in shared folders, as a hostile neighbour meets them (issue 35): a `.lock` planted as a
// link or a pipe in an output folder, a figure aimed at a pipe or a device, a link planted
// under the name of a figure's temporary, and a kill while gnuplot draws. Each is refused with
// one line or done right; nothing is followed, replaced or left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>  // makedev
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "programs/pe/tests/run_pe.hpp"

namespace fs = std::filesystem;

namespace {

using pe_test::expect_one_line_error;
using pe_test::Outcome;
using pe_test::run;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The names in a folder that look like a temporary ("<name>.tmp.<pid>"), one per line.
std::string temporaries_in(const fs::path& folder) {
  std::string found;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().filename().string().find(".tmp.") != std::string::npos)
      found += entry.path().filename().string() + "\n";
  return found;
}

// A character device to aim a figure at: root makes a null device of its own in `folder` (a
// regression must not replace the system's /dev/null); anyone else gets /dev/null, which they
// cannot replace (the message then shows the check, not the rename, refused it).
fs::path a_character_device(const fs::path& folder) {
  if (::geteuid() != 0) return "/dev/null";
  const fs::path device = folder / "mynull";
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) return "";
  return device;
}

// Starts pe in a child process, after `prepare` has run there (it may set the environment or
// plant files under the child's process id, which pe keeps); output discarded.
template <class Prepare>
pid_t start_after(const std::string& args, Prepare prepare) {
  const std::string command = "exec " + std::string(PE_BINARY) + " " + args + " >/dev/null 2>&1";
  const pid_t pid = ::fork();
  if (pid == 0) {
    prepare();
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

bool gnuplot_installed() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }

// One tiny trained model for every test here.
class Links : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = pe_test::fresh_dir("pe_links_model");
    const Outcome o = run(pe_test::kTinyTrain + " --out " + dir);
    ASSERT_EQ(o.exit_code, 0) << o.output;
    checkpoint_ = dir + "/checkpoint.agt";
  }
  static std::string checkpoint_;
};
std::string Links::checkpoint_;

TEST_F(Links, ALockFileThatIsALinkOrAPipeIsRefusedAndLeftAsItWas) {
  const fs::path dir = pe_test::fresh_dir("pe_links_lock");
  std::ofstream(dir / "victim") << "precious";
  fs::create_directories(dir / "linked");
  fs::create_symlink(dir / "victim", dir / "linked/.lock");
  expect_one_line_error(run(pe_test::kTinyTrain + " --out " + (dir / "linked").string()),
                        (dir / "linked/.lock").string(), "a .lock that is a link");
  EXPECT_EQ(read(dir / "victim"), "precious") << "the link's target was written";
  EXPECT_TRUE(fs::is_symlink(dir / "linked/.lock"));

  fs::create_directories(dir / "piped");
  ASSERT_EQ(::mkfifo((dir / "piped/.lock").c_str(), 0600), 0);
  expect_one_line_error(run(pe_test::kTinyTrain + " --out " + (dir / "piped").string()),
                        (dir / "piped/.lock").string(), "a .lock that is a pipe");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(dir / "piped/.lock")));
}

TEST_F(Links, AFigureAimedAtAPipeOrADeviceIsRefusedAndLeftAsItWas) {
  const fs::path dir = pe_test::fresh_dir("pe_links_devices");
  const fs::path fifo = dir / "fifo.png";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path device = a_character_device(dir);
  if (device.empty()) GTEST_SKIP() << "root cannot make a device node here";
  for (const std::string& command : {"heatmap " + checkpoint_ + " --out " + fifo.string(),
                                     "eval " + checkpoint_ + " --plot " + fifo.string()}) {
    expect_one_line_error(run(command), fifo.string(), command);
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo))) << command;
  }
  for (const std::string& command : {"heatmap " + checkpoint_ + " --out " + device.string(),
                                     "eval " + checkpoint_ + " --plot " + device.string()}) {
    expect_one_line_error(run(command), "character device", command);
    EXPECT_TRUE(fs::is_character_file(fs::symlink_status(device))) << command;
  }
  EXPECT_EQ(temporaries_in(dir), "");
}

TEST_F(Links, ALinkPlantedUnderTheFiguresTemporaryNameIsNotFollowed) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox)";
  const fs::path dir = pe_test::fresh_dir("pe_links_planted");
  std::ofstream(dir / "victim") << "precious";
  const fs::path png = dir / "attention.png";
  // pe keeps the process id of the child, so the link has the temporary's very name
  const pid_t pid = start_after("heatmap " + checkpoint_ + " --out " + png.string(), [&] {
    fs::create_symlink(dir / "victim", png.string() + ".tmp." + std::to_string(::getpid()));
  });
  EXPECT_EQ(pe_test::wait_for(pid), 0);
  EXPECT_EQ(read(dir / "victim"), "precious") << "the planted link was written through";
  EXPECT_EQ(read(png).substr(1, 3), "PNG");
  EXPECT_TRUE(fs::is_symlink(png.string() + ".tmp." + std::to_string(pid)));
}

TEST_F(Links, SigtermWhileGnuplotDrawsLeavesNoGnuplotAndNoTemporaries) {
  const fs::path dir = pe_test::fresh_dir("pe_links_sigterm");
  const fs::path bin = dir / "bin", temporaries = dir / "tmp", out = dir / "out";
  for (const auto& folder : {bin, temporaries, out}) fs::create_directories(folder);
  // A stand-in gnuplot (pe finds gnuplot on PATH): it writes into the output it is given,
  // tells its process id, and sleeps as the same process, a figure caught mid-drawing.
  const fs::path pid_file = dir / "gnuplot.pid";
  std::ofstream(bin / "gnuplot") << "#!/bin/sh\nout=${2#set output \\'}\nout=${out%\\'}\n"
                                 << "head -c 100000 /dev/zero > \"$out\"\n"
                                 << "echo $$ > '" << pid_file.string() << ".part'\n"
                                 << "mv '" << pid_file.string() << ".part' '" << pid_file.string()
                                 << "'\nexec sleep 60\n";
  fs::permissions(bin / "gnuplot", fs::perms::owner_all);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  const pid_t pe =
      start_after("heatmap " + checkpoint_ + " --out " + (out / "attention.png").string(), [&] {
        ::setenv("PATH", path.c_str(), 1);
        ::setenv("TMPDIR", temporaries.c_str(), 1);
      });
  pid_t gnuplot = -1;
  for (int i = 0; i < 3000 && gnuplot < 0; ++i) {
    std::error_code error;
    if (fs::exists(pid_file, error))
      gnuplot = pid_t(std::stol(read(pid_file)));
    else
      ::usleep(10000);
  }
  ASSERT_GT(gnuplot, 0) << "the stand-in gnuplot never ran";
  ASSERT_EQ(::kill(pe, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pe, &status, 0), pe);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "pe must end as killed by SIGTERM, as a shell expects; status " << status;
  errno = 0;
  EXPECT_EQ(::kill(gnuplot, 0), -1) << "gnuplot (pid " << gnuplot << ") is left running";
  EXPECT_EQ(errno, ESRCH);
  if (errno != ESRCH) ::kill(gnuplot, SIGKILL);
  EXPECT_TRUE(fs::is_empty(temporaries)) << "a temporary folder is left";
  EXPECT_TRUE(fs::is_empty(out)) << temporaries_in(out);
}

}  // namespace
