// Which SIMD instruction set the framework's kernels run on.
#pragma once

namespace ag {

/// The SIMD path chosen for this CPU at the first kernel call: "avx512", "avx2", "sse2",
/// "neon64" or "scalar" (the widest the CPU runs, unless the environment variable PE_SIMD
/// names another). Throws std::runtime_error, saying which paths there are, if PE_SIMD
/// names a path this build lacks or this CPU cannot run.
const char* simd_path_name();

}  // namespace ag
