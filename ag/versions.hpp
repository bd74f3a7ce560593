// Which releases of its header libraries this build of the framework was compiled against.
#pragma once
#include <string>

namespace ag {

/// "xsimd 14.3.0, xtensor 0.27.1, xtl 0.8.2": the releases the framework was compiled with
/// (cmake/Dependencies.cmake chose them; library_versions.cpp checks the headers agree).
std::string library_versions();

}  // namespace ag
