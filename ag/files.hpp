// Reading and writing whole files safely: a read never sizes memory from an unchecked file,
// and a write never leaves half a file under the final name.
#pragma once
#include <cstdint>
#include <string>

namespace ag {

/// The whole of a regular file, at most max_bytes long. A missing file, a directory, a FIFO or
/// a device (/dev/zero would be read to the end of memory, a FIFO would block), and a file
/// larger than max_bytes are errors naming the file and `what` it was meant to be.
std::string read_file(const std::string& path, std::uint64_t max_bytes, const std::string& what);

/// Writes bytes to `path` so that, at every moment, the file under that name is either the old
/// one or the complete new one: the bytes go to a temporary file in the same folder, which is
/// flushed to disk and then renamed over `path`. Any failure (a missing or read-only folder, a
/// full disk) is an error naming the file and the reason, and leaves no temporary file behind.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace ag
