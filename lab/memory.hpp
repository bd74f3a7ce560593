// A rough figure of the memory a training configuration needs, checked before anything is
// allocated: a typing mistake (--length 4096 with Shaw's tables, --batch 100000) should be a
// one-line refusal with the figure, not minutes of swapping followed by bad_alloc.
#pragma once
#include <cstdint>
#include <string>

namespace pe {

struct TrainConfig;
struct EncodingSpec;

/// Bytes that training `config` (with a vocabulary of `vocab` tokens) needs: parameters with
/// their gradients and Adam state, plus the activations of one step (attention scores
/// B*H*T*T per layer; Shaw's [T, T, D] tensors with -o pairwise=true; FIRE's MLP at every
/// (query, key), T*T*width per layer; the dynamic position bias's at every distance and its
/// gathered [H, T, T] bias), kept for the backward pass.
/// When eval_length > 0, the figure for evaluating at that length instead (64 sequences at a time,
/// no gradients). An estimate within a small factor, computed in floating point so that no product
/// overflows.
double estimated_bytes(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

/// Memory this process may use, and where the figure came from.
struct AvailableMemory {
  double bytes = 0;    ///< 0 when nothing could be read: then nothing is refused
  std::string source;  ///< "MemAvailable in /proc/meminfo", "total physical memory", ...
};

/// $PE_MEMORY_LIMIT_BYTES when set (a whole number of bytes; anything else throws ag::Error);
/// otherwise MemAvailable from /proc/meminfo on Linux (WSL included); otherwise the machine's
/// physical memory (macOS's hw.memsize, or sysconf where it answers), which is all a portable
/// program can read there: an upper bound, so the check still catches the typing mistakes it
/// is for, and its message says which figure it used.
AvailableMemory available_memory();

/// What `pe generate` (and `pe eval --window`) decodes, for estimated_generation_bytes.
struct GenerationPlan {
  std::int64_t prompt = 1;  ///< P: tokens of the prompt
  std::int64_t tokens = 1;  ///< N: tokens written after it (the last one is never read back)
  bool cache = true;        ///< through the key/value cache; false: a full pass per token
  std::int64_t window = 0;  ///< W of chapter 12's window cache, read a token at a time; 0: none
  std::int64_t sinks = 0;   ///< S of the window cache: the first tokens it never evicts
};

/// Bytes that decoding `plan` needs, the model at inference (no gradients, one sequence):
/// the parameters; with the key/value cache, the prompt's one pass (as estimated_bytes
/// evaluates it, at length P) and then, per layer, the key and value of every token read
/// (P + N - 1 of them; a copy more of one layer's while the cache grows) with what the
/// encoding keeps in its cache slot, and one step's activations over those keys; with the
/// window cache the same over the S + W tokens it keeps at most; without a cache, a full
/// pass at length P + N - 1. Far below estimated_bytes at the same length, which counts the
/// [T, T] scores of a full pass: the cache needs only [T, C] per layer.
double estimated_generation_bytes(const TrainConfig& config, std::int64_t vocab,
                                  const GenerationPlan& plan);

/// Throws ag::Error with both figures when estimated_bytes(...) exceeds available_memory().
/// When no figure could be read, says so once on stderr and refuses nothing.
void check_memory(const TrainConfig& config, std::int64_t vocab, std::int64_t eval_length = 0);

/// The same check for any estimate: `what` names the work in the message ("training this
/// configuration", "inspecting rope at length 100000").
void require_memory(double bytes, const std::string& what);

/// Bytes `pe heatmap` needs at `length`: one held-out sequence through the model (as
/// estimated_bytes evaluates) and the figure's weights, one T x T panel per layer and head,
/// as numbers and as gnuplot's text.
double estimated_heatmap_bytes(const TrainConfig& config, std::int64_t vocab, std::int64_t length);

/// Bytes `pe inspect` needs to show encoding `name` (built from `spec`) at `length` positions,
/// plus `extra_values` more (the rotated vectors): each value held as a double, a JSON number
/// and its text. The tables' sizes come from those the encoding returns at 8 and 16 positions
/// (an axis that follows the length is scaled to it), so a [T, C] table and an [H, T, T] bias
/// are both counted right. An encoding that cannot be built or inspected that small counts
/// nothing here (building it for real then reports its own error).
double estimated_inspect_bytes(const std::string& name, const EncodingSpec& spec,
                               std::int64_t length, double extra_values = 0);

}  // namespace pe
