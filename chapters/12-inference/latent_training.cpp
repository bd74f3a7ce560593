#include "chapters/12-inference/latent_training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "ag/optim.hpp"
#include "chapters/01-attention/permutation.hpp"
#include "lab/tasks.hpp"
#include "lab/trainer.hpp"

namespace pe {

namespace {

// The lab's schedule (Trainer::learning_rate): linear warm-up, then a cosine to lr / 10.
double learning_rate(const LatentTraining& run, std::int64_t steps, std::int64_t step) {
  if (step < run.warmup) return run.lr * double(step + 1) / double(run.warmup);
  const double span = double(std::max<std::int64_t>(steps - run.warmup, 1));
  const double progress = std::min(1.0, double(step - run.warmup) / span);
  return run.lr * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * progress)));
}

// Accuracy as the lab's Trainer::evaluate counts it: argmax against every scored target.
void evaluate(LatentDecoder& model, const Batch& held_out, LatentResult& result) {
  ag::NoGradGuard no_grad;
  const ag::Tensor logits = model.forward(held_out.inputs);
  const std::int64_t V = logits.size(-1);
  const std::vector<double> values = logits.to_vector();
  std::int64_t right = 0, scored = 0;
  for (std::size_t i = 0; i < held_out.targets.values.size(); ++i) {
    if (held_out.targets.values[i] == kIgnore) continue;
    const double* row = values.data() + i * V;
    right += std::max_element(row, row + V) - row == held_out.targets.values[i] ? 1 : 0;
    ++scored;
  }
  ag::check(scored > 0, "train_latent_model", "the held-out set scores no position");
  result.accuracy = double(right) / double(scored);
  result.held_out_loss = sequence_loss(logits, held_out.targets).item();
}

// Full pass against one token at a time through the latent cache, absorbed.
double cached_difference(LatentDecoder& model, const ag::Indices& inputs) {
  ag::NoGradGuard no_grad;
  const std::int64_t B = inputs.shape[0], T = inputs.shape[1];
  const ag::Tensor full = model.forward(inputs);
  LatentCache cache;
  double worst = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    ag::Indices step{{}, {B, 1}};
    for (std::int64_t b = 0; b < B; ++b) step.values.push_back(inputs.values[b * T + t]);
    const ag::Tensor logits = model.forward(step, t, &cache, LatentMode::absorbed);
    worst = std::max(worst, max_abs_difference(logits, ag::slice(full, 1, t, t + 1)));
  }
  return worst;
}

}  // namespace

// [latent-training]
LatentResult train_latent_model(const std::string& task_name, std::int64_t steps,
                                std::uint64_t seed, const LatentShape& shape,
                                const LatentTraining& run) {
  ag::check(steps > 0, "train_latent_model", "steps must be positive, got ", steps);
  ag::check(run.batch > 0 && run.eval_sequences > 0 && run.decode_sequences > 0 &&
                run.decode_sequences <= run.eval_sequences && run.lr > 0 && run.warmup >= 0,
            "train_latent_model",
            "batch, eval_sequences, lr must be positive and 0 < decode_sequences <= "
            "eval_sequences, got batch ",
            run.batch, ", eval ", run.eval_sequences, ", decode ", run.decode_sequences, ", lr ",
            run.lr);
  const TaskOptions options =
      task_name == "shiftk" ? TaskOptions{{"k", "4"}} : TaskOptions{};  // the book's k = 4
  const std::unique_ptr<Task> task = make_task(task_name, options);
  task->check_length(run.length);

  LatentDecoderConfig config;
  config.vocab = task->vocab_size();
  config.attention = shape;
  config.layers = run.layers;
  config.ffn_width = run.ffn_width;
  ag::Rng init = ag::Rng(seed).fork(1);
  LatentDecoder model(config, init);
  ag::AdamW optimizer(model.parameters(), run.lr, 0.9, 0.999, 1e-8, run.weight_decay);
  ag::Rng data = ag::Rng(seed).fork(2);  // not Task::kHeldOutStream: never the held-out set

  LatentResult result;
  result.task = task_name;
  result.parameters = model.parameter_count();
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; step < steps; ++step) {
    const Batch batch = task->sample(run.batch, run.length, data);
    optimizer.lr = learning_rate(run, steps, step);
    optimizer.zero_grad();
    ag::Tensor loss = sequence_loss(model.forward(batch.inputs), batch.targets);
    const double value = loss.item();
    ag::check(std::isfinite(value), "train_latent_model", "training diverged at step ", step + 1,
              ": the loss is ", value);
    loss.backward();
    ag::clip_grad_norm(model.parameters(), run.clip);
    optimizer.step();
    if (step == 0) result.first_loss = value;
    result.final_loss = value;
    ++result.steps;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const Batch held_out = task->held_out(run.eval_sequences, run.length, seed);
  evaluate(model, held_out, result);
  const ag::Indices first{{held_out.inputs.values.begin(),
                           held_out.inputs.values.begin() + run.decode_sequences * run.length},
                          {run.decode_sequences, run.length}};
  result.cached_decoding_difference = cached_difference(model, first);
  return result;
}
// [latent-training]

}  // namespace pe
