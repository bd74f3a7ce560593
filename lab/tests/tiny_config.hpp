// The small training configuration the experiment bench's tests share: a 2-head decoder of
// width 32 on sequences of 12, trained for 40 steps in well under a second.
#pragma once
#include <string>

#include "lab/trainer.hpp"

namespace pe {

inline TrainConfig tiny(const std::string& task = "shiftk") {
  TrainConfig c;
  c.task = task;
  c.model.width = 32;
  c.model.heads = 2;
  c.model.ffn_width = 64;
  c.length = 12;
  c.batch = 16;
  c.steps = 40;
  c.warmup = 5;
  c.lr = 3e-3;
  c.eval_every = 20;
  c.eval_sequences = 32;
  return c;
}

}  // namespace pe
