#include "ag/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
}  // namespace

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
void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  Descriptor file{::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  check(file.fd >= 0, "write_file", "cannot write '", path, "': ", reason());
  auto fail = [&](const std::string& why) {
    ::unlink(temporary.c_str());
    throw Error("write_file: writing '" + path + "' failed: " + why);
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
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail(reason());
}
// [atomic-write]

}  // namespace ag
