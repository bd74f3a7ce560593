// The library releases this build was compiled with, checked against what CMake configured:
// a system header left on the include path (a Debian 12 xsimd 8.1 in /usr/include while CMake
// fetched 14.3, say) would otherwise be compiled in silently.
#include <xsimd/config/xsimd_config.hpp>
#include <xtl/xtl_config.hpp>

#include "ag/src/xtensor_compat.hpp"
#include "ag/versions.hpp"

#ifndef AG_XSIMD_CONFIGURED
#error "ag/CMakeLists.txt passes AG_XSIMD_CONFIGURED, AG_XTENSOR_CONFIGURED, AG_XTL_CONFIGURED"
#endif

namespace ag {
namespace {

// "14.3.0" == 14, 3, 0 ? A configured version may stop early ("14.3" matches 14.3.x).
constexpr bool same_release(const char* configured, int major, int minor, int patch) {
  const int parts[3] = {major, minor, patch};
  for (int part : parts) {
    if (*configured == '\0') return true;
    int value = 0;
    for (; *configured >= '0' && *configured <= '9'; ++configured)
      value = value * 10 + (*configured - '0');
    if (value != part) return false;
    if (*configured == '.') ++configured;
  }
  return true;
}

static_assert(same_release(AG_XSIMD_CONFIGURED, XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR,
                           XSIMD_VERSION_PATCH),
              "the xsimd headers on the include path are not the release CMake configured");
static_assert(same_release(AG_XTENSOR_CONFIGURED, XTENSOR_VERSION_MAJOR, XTENSOR_VERSION_MINOR,
                           XTENSOR_VERSION_PATCH),
              "the xtensor headers on the include path are not the release CMake configured");
static_assert(same_release(AG_XTL_CONFIGURED, XTL_VERSION_MAJOR, XTL_VERSION_MINOR,
                           XTL_VERSION_PATCH),
              "the xtl headers on the include path are not the release CMake configured");

std::string release(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

std::string library_versions() {
  return "xsimd " + release(XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR, XSIMD_VERSION_PATCH) +
         ", xtensor " +
         release(XTENSOR_VERSION_MAJOR, XTENSOR_VERSION_MINOR, XTENSOR_VERSION_PATCH) + ", xtl " +
         release(XTL_VERSION_MAJOR, XTL_VERSION_MINOR, XTL_VERSION_PATCH);
}

}  // namespace ag
