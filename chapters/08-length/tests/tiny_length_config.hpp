// The configuration chapter 8's tests train: a 2-layer, 2-head model of width 16 trained
// 3 steps at length 8, enough to have weights to evaluate at other lengths, not to be good.
#pragma once
#include <string>

#include "lab/trainer.hpp"

namespace pe {

inline TrainConfig tiny_length_config(const std::string& encoding,
                                      const std::string& task = "shiftk") {
  TrainConfig c;
  c.task = task;
  c.encoding = encoding;
  c.model.width = 16;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.ffn_width = 32;
  c.length = 8;
  c.batch = 4;
  c.steps = 3;
  c.warmup = 1;
  c.eval_every = 3;
  c.eval_sequences = 4;
  return c;
}

}  // namespace pe
