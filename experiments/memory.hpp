// A rough figure of the memory a training configuration needs, checked before anything is
// allocated: a typing mistake (--length 4096 with Shaw's tables, --batch 100000) should be a
// one-line refusal with the figure, not minutes of swapping followed by bad_alloc.
#pragma once
#include <cstdint>

namespace pe {

struct TrainConfig;

/// Bytes that training `config` (with a vocabulary of `vocab` tokens) needs: parameters with
/// their gradients and Adam state, plus the activations of one step (attention scores
/// B*H*T*T per layer, Shaw's [T, T, D] tables per layer), kept for the backward pass. When
/// eval_length > 0, the figure for evaluating at that length instead (64 sequences at a
/// time, no gradients). An estimate within a small factor, computed in floating point so
/// that no product overflows.
double estimated_bytes(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

/// Bytes this process may use: $PE_MEMORY_LIMIT_BYTES when set (tests), otherwise
/// MemAvailable from /proc/meminfo (0 when neither can be read: then nothing is refused).
double available_bytes();

/// Throws ag::Error with both figures when estimated_bytes(...) exceeds available_bytes().
void check_memory(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

}  // namespace pe
