// A rough figure of the memory a training configuration needs, checked before anything is
// allocated: a typing mistake (--length 4096 with Shaw's tables, --batch 100000) should be a
// one-line refusal with the figure, not minutes of swapping followed by bad_alloc.
#pragma once
#include <cstdint>
#include <string>

namespace pe {

struct TrainConfig;

/// Bytes that training `config` (with a vocabulary of `vocab` tokens) needs: parameters with
/// their gradients and Adam state, plus the activations of one step (attention scores
/// B*H*T*T per layer, Shaw's [T, T, D] tables per layer), kept for the backward pass. When
/// eval_length > 0, the figure for evaluating at that length instead (64 sequences at a
/// time, no gradients). An estimate within a small factor, computed in floating point so
/// that no product overflows.
double estimated_bytes(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

/// Memory this process may use, and where the figure came from.
struct AvailableMemory {
  double bytes = 0;      ///< 0 when nothing could be read: then nothing is refused
  std::string source;    ///< "MemAvailable in /proc/meminfo", "total physical memory", ...
};

/// $PE_MEMORY_LIMIT_BYTES when set (a whole number of bytes; anything else throws ag::Error);
/// otherwise MemAvailable from /proc/meminfo on Linux (WSL included); otherwise the machine's
/// physical memory (macOS's hw.memsize, or sysconf where it answers), which is all a portable
/// program can read there: an upper bound, so the check still catches the typing mistakes it
/// is for, and its message says which figure it used.
AvailableMemory available_memory();

/// Throws ag::Error with both figures when estimated_bytes(...) exceeds available_memory().
/// When no figure could be read, says so once on stderr and refuses nothing.
void check_memory(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

}  // namespace pe
