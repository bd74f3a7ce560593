// Training the latent-attention decoder on the book's reference tasks through the lab's task
// objects, and checking that its latent cache, absorbed, decodes what the full pass computes.
#pragma once
#include <cstdint>
#include <string>

#include "chapters/12-inference/latent_attention.hpp"

namespace pe {

/// The training run of one LatentDecoder. The defaults train ShiftK or AlternatingChar at
/// length 32 in well under a minute (about 13 s for 500 steps on one core).
struct LatentTraining {
  std::int64_t layers = 1;            ///< L, as in the reference experiment
  std::int64_t ffn_width = 256;       ///< F
  std::int64_t length = 32;           ///< T of every training and held-out sequence
  std::int64_t batch = 32;            ///< sequences per step
  double lr = 3e-3;                   ///< AdamW's peak rate (warm-up, then cosine to lr / 10)
  std::int64_t warmup = 50;           ///< steps of linear warm-up
  double weight_decay = 0.01;         ///< AdamW's decoupled decay
  double clip = 1.0;                  ///< maximum global gradient norm
  std::int64_t eval_sequences = 256;  ///< held-out sequences for the final accuracy
  std::int64_t decode_sequences = 4;  ///< held-out sequences decoded one token at a time
};

/// The chapter's number of training steps: both reference tasks reach full held-out accuracy.
inline constexpr std::int64_t kLatentTrainingSteps = 500;

/// What train_latent_model measured.
struct LatentResult {
  std::string task;             ///< as given ("shiftk" runs with k = 4)
  std::int64_t steps = 0;       ///< optimisation steps taken
  double first_loss = 0;        ///< the training loss of the first step
  double final_loss = 0;        ///< the training loss of the last step
  double accuracy = 0;          ///< held-out accuracy after training (argmax, as the lab's)
  double held_out_loss = 0;     ///< held-out mean cross-entropy after training
  double seconds = 0;           ///< wall time of the training steps
  std::int64_t parameters = 0;  ///< the model's trainable numbers
  /// Largest |logit difference| between the full pass and decoding the held-out sequences one
  /// token at a time through the latent cache, absorbed (float32: rounding, ~1e-5).
  double cached_decoding_difference = 0;
};

/// Trains a LatentDecoder (attention `shape`, the rest from `run`) on a task of the lab
/// ("shiftk" with k = 4, "alternating", or any name `pe list` shows) for `steps` steps from
/// `seed`, then evaluates it on the task's held-out set and decodes with its cache.
/// An unknown task or a bad size is an ag::Error.
LatentResult train_latent_model(const std::string& task, std::int64_t steps, std::uint64_t seed,
                                const LatentShape& shape = {}, const LatentTraining& run = {});

}  // namespace pe
