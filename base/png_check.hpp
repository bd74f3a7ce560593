// Whether a file is a whole PNG: a figure is renamed into place only after this check, so that a
// full disk or a killed gnuplot never leaves a truncated figure under the final name.
#pragma once
#include <string>

namespace pe {

/// "" when the file at `path` is a complete PNG: the 8-byte signature, an IHDR chunk first
/// with a non-zero width and height, every chunk's CRC right, and the IEND chunk exactly at the
/// end of the file. Otherwise what is wrong, e.g. "it ends inside a chunk (no IEND)". The
/// compressed pixels are not inflated: a PNG whose every chunk is whole and checksummed was
/// written to the end.
std::string png_problem(const std::string& path);

}  // namespace pe
