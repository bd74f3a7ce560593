// What built a program, for the results it writes: the commit of its sources, read from their
// git checkout when first asked, and the compiler, build type, SIMD path and libraries.
#pragma once
#include <map>
#include <string>

namespace pe {

/// The commit of the sources this program was built from, as their git checkout says when
/// first asked (a run and a chapter's experiment ask as they start), with "-dirty" when a
/// tracked source or build file has uncommitted changes; "unknown" outside a checkout. The
/// results check refuses to quote a summary from a dirty tree.
const std::string& source_commit();

/// What built this program: the commit of its sources (source_commit), compiler, build type,
/// SIMD target, libraries.
std::map<std::string, std::string> build_versions();

}  // namespace pe
