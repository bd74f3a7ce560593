#include "base/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ag/error.hpp"

namespace pe {

namespace {

// The process id the holder wrote into the lock file, or "unknown" (it writes it just after it
// takes the lock, so a reader can come in between).
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, std::size_t(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return "unknown";
  return pid == std::to_string(::getpid()) ? pid + ", this very process" : pid;
}

}  // namespace

FolderLock::FolderLock(const std::string& folder, const std::string& op)
    : folder_(folder), path_(folder + "/.lock") {
  namespace fs = std::filesystem;
  const std::string prefix = op.empty() ? "" : op + ": ";
  std::error_code error;
  created_ = !fs::exists(folder, error);
  fs::create_directories(folder, error);
  if (error)
    throw ag::Error(prefix + "cannot create the output folder '" + folder + "' (" +
                    error.message() + ")");
  auto refuse = [&](const std::string& why) {
    if (created_) fs::remove(folder, error);
    throw ag::Error(prefix + why);
  };
  bool made = false;  // whether the file fd_ holds was created by this process
  for (int attempt = 0;; ++attempt) {
    if (attempt == 100)
      refuse("cannot lock the output folder '" + folder + "': its lock file keeps changing");
    // A new lock file is created exclusively; one already there (left by a killed program, or
    // another program's) is opened read-only, without following a link and without blocking
    // on a pipe, and never truncated or written: a planted link or a hard link to someone's
    // file must not make this program overwrite what it points to.
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    made = fd_ >= 0;
    if (!made && errno == EEXIST) {
      fd_ = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd_ < 0 && errno == ENOENT) continue;  // its holder removed it just now: make one
    }
    if (fd_ < 0) {
      const int why = errno;
      struct stat named {};
      if (why == ELOOP && ::lstat(path_.c_str(), &named) == 0 && S_ISLNK(named.st_mode))
        refuse("the lock file '" + path_ +
               "' is a symbolic link; a program never makes one there: remove it and rerun");
      refuse("cannot write into the output folder '" + folder + "' (" + std::strerror(why) + ")");
    }
    struct stat held {};
    if (::fstat(fd_, &held) != 0 || !S_ISREG(held.st_mode) || held.st_nlink != 1) {
      ::close(fd_);
      fd_ = -1;
      refuse("the lock file '" + path_ +
             "' is not a regular file of its own (a pipe, a device, a folder or a hard link to "
             "another file); a program never makes one there: remove it and rerun");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;
      const std::string holder = why == EWOULDBLOCK ? holder_of(fd_) : "";
      ::close(fd_);
      fd_ = -1;
      if (why == EWOULDBLOCK)
        refuse("the output folder '" + folder + "' is being written by another process (pid " +
               holder + "); wait for it to finish or choose another folder");
      refuse("cannot lock the output folder '" + folder + "' (" + std::strerror(why) + ")");
    }
    // The holder before us may have removed the file between our open and our lock: then we
    // hold a file no one else will look at, and must lock the one in the folder instead.
    struct stat named {};
    const bool current = ::lstat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
                         held.st_ino == named.st_ino;
    if (current && made) break;
    // A lock file we did not make but could lock was left by a program that was killed: it is
    // removed (while we hold it, as release() does) and a fresh one made in its place.
    if (current && !made) ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // A failure here costs only the pid in a second writer's message: the lock itself holds.
  // The file is the empty one this process created, so nothing is truncated.
  const bool written = ::pwrite(fd_, pid.data(), pid.size(), 0) == ssize_t(pid.size());
  static_cast<void>(written);
}

FolderLock::~FolderLock() { release(); }

void FolderLock::abandon() {
  release();
  std::error_code error;
  if (created_) std::filesystem::remove(folder_, error);  // fails, as it should, unless empty
}

void FolderLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while we still hold it: see the constructor
  ::close(fd_);
  fd_ = -1;
}

}  // namespace pe
