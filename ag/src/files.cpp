#include "ag/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "ag/error.hpp"

namespace ag {

namespace {
std::string reason() { return std::strerror(errno); }

// Closes a descriptor on every path out of a function.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Why `path` cannot be the destination of a write, or "" when it can (missing, or a regular
// file). lstat, not stat: the link itself is looked at, never what it points to.
std::string destination_problem(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "";  // missing: a new file is made
  if (S_ISREG(info.st_mode)) return "";
  if (S_ISLNK(info.st_mode))
    return "it is a symbolic link, and links are not written through (in a shared folder "
           "anyone could have planted it); remove the link or name the file itself";
  const char* kind = S_ISDIR(info.st_mode)    ? "a folder"
                     : S_ISFIFO(info.st_mode) ? "a pipe (FIFO)"
                     : S_ISCHR(info.st_mode)  ? "a character device"
                     : S_ISBLK(info.st_mode)  ? "a block device"
                     : S_ISSOCK(info.st_mode) ? "a socket"
                                              : "something other than a file";
  return std::string("it is ") + kind +
         ", not a regular file, and only regular files are replaced; name a file instead";
}

// Six letters or digits, for a temporary's name when the plain one is taken. Random, so that
// no one can take every name this process would try in advance.
std::string random_word() {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device source;
  std::string word(6, 'a');
  for (char& c : word) c = kLetters[source() % (sizeof kLetters - 1)];
  return word;
}

// Creates the temporary beside `path` that this process alone will write: O_EXCL fails on any
// name that exists, a link included (O_NOFOLLOW says so twice), so nothing planted there is
// followed or truncated. Returns the descriptor (-1 with errno set) and the name in `name`.
int create_temporary(const std::string& path, std::string& name) {
  const std::string tail = ".tmp." + std::to_string(::getpid());
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = attempt == 0 ? path + tail : path + "." + random_word() + tail;
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST: every name tried was taken
}
}  // namespace

void check_destination(const std::string& path, const char* op) {
  const std::string problem = destination_problem(path);
  if (!problem.empty()) throw Error(std::string(op) + ": cannot write '" + path + "': " + problem);
}

std::string read_file(const std::string& path, std::uint64_t max_bytes, const std::string& what) {
  struct stat info {};
  // Not check(stat(...) == 0, ..., reason()): the arguments of a call are evaluated in any
  // order, and reason() read before stat set errno said "Success".
  if (::stat(path.c_str(), &info) != 0)
    throw Error("read_file: cannot open " + what + " '" + path + "': " + reason());
  // stat follows links, so a link to a regular file is fine; anything else is refused before
  // it is opened (opening a FIFO would already block).
  check(S_ISREG(info.st_mode), "read_file", what, " '", path,
        "' is not a regular file (a folder, a pipe or a device)");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  check(size <= max_bytes, "read_file", what, " '", path, "' has ", size, " bytes, more than the ",
        max_bytes, " allowed");
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  check(file.fd >= 0, "read_file", "cannot open ", what, " '", path, "': ", reason());
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    check(n >= 0, "read_file", "reading ", what, " '", path, "' failed: ", reason());
    check(n > 0, "read_file", what, " '", path, "' became shorter while it was read");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

// [atomic-write]
void write_file_atomically(const std::string& path, const std::string& bytes, const char* op) {
  check_destination(path, op);
  std::string temporary;
  Descriptor file{create_temporary(path, temporary)};
  if (file.fd < 0) throw Error(std::string(op) + ": cannot write '" + path + "': " + reason());
  auto fail = [&](const std::string& why) {
    ::unlink(temporary.c_str());
    throw Error(std::string(op) + ": writing '" + path + "' failed: " + why);
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? reason() : "nothing was written");
    done += static_cast<std::size_t>(n);
  }
  // The data must be on disk before the name points at it, or a crash could leave an empty
  // file under the final name.
  if (::fsync(file.fd) != 0) fail(reason());
  const int fd = file.fd;
  file.fd = -1;
  if (::close(fd) != 0) fail(reason());
  // rename replaces whatever holds the name: a device or a link put there while the bytes were
  // written is refused now rather than replaced.
  if (const std::string problem = destination_problem(path); !problem.empty()) fail(problem);
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail(reason());
}
// [atomic-write]

}  // namespace ag
