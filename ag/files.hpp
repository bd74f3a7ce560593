// Reading and writing whole files safely: a read never sizes memory from an unchecked file,
// and a write never leaves half a file under the final name, never writes through a link and
// never replaces anything but a regular file.
#pragma once
#include <cstdint>
#include <string>

namespace ag {

/// The whole of a regular file, at most max_bytes long. A missing file, a directory, a FIFO or
/// a device (/dev/zero would be read to the end of memory, a FIFO would block), and a file
/// larger than max_bytes are errors naming the file and `what` it was meant to be.
std::string read_file(const std::string& path, std::uint64_t max_bytes, const std::string& what);

/// Fails (ag::Error prefixed by `op`) unless `path` is free for a new regular file: missing,
/// or a regular file. A folder, a pipe (FIFO), a device (/dev/null, /dev/full) or a socket is
/// refused, never replaced; so is a symbolic link, whatever it points to: in a folder others
/// can write into, a planted link would otherwise decide which file is written (and replacing
/// the link by a file would silently break a link its owner meant). Call it before the work
/// that ends in the write, so that a wrong destination costs nothing.
void check_destination(const std::string& path, const char* op = "write_file");

/// Writes bytes to `path` so that, at every moment, the file under that name is either the old
/// one or the complete new one: the bytes go to a temporary file in the same folder, which is
/// flushed to disk and then renamed over `path`. The destination must pass check_destination.
/// The temporary is created by this process alone (O_CREAT | O_EXCL | O_NOFOLLOW): a file or a
/// link someone planted under its name is neither followed nor overwritten. It is named
/// "<path>.tmp.<pid>", or "<path>.<random>.tmp.<pid>" when that name is taken, so that a
/// temporary left by a killed process ends in ".tmp.<pid>" either way (lab/run.cpp's
/// remove_stale_temporaries removes those of dead processes). Any failure (a missing or
/// read-only folder, a full disk) is an error prefixed by `op`, naming the file and the reason,
/// and leaves no temporary file behind.
void write_file_atomically(const std::string& path, const std::string& bytes,
                           const char* op = "write_file");

}  // namespace ag
