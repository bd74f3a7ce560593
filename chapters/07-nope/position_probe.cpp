#include "chapters/07-nope/position_probe.hpp"

namespace pe {

// [layer-states]
std::vector<ag::Tensor> layer_states(Decoder& model, const ag::Indices& ids) {
  // TASK 7.3 begin: the hidden state of every layer
  ag::NoGradGuard no_grad;
  std::vector<ag::Tensor> states{model.encoding->embed(model.tokens.forward(ids), 0)};
  for (const ag::Tensor& h : model.hidden_states(ids)) states.push_back(h);
  return states;
  // TASK 7.3 end
}
// [layer-states]

ProbeData position_data(const ag::Tensor& states) {
  ag::check(states.dim() == 3, "position_data", "states must be [B, T, C], got ",
            ag::shape_string(states.shape()));
  const std::int64_t B = states.size(0), T = states.size(1), C = states.size(2);
  ProbeData data;
  data.features = states.to_vector();  // row b * T + t is the token at position t
  data.rows = B * T;
  data.cols = C;
  data.targets.resize(static_cast<std::size_t>(B * T));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) data.targets[b * T + t] = double(t);
  return data;
}

// [probe-positions]
std::vector<ProbeScore> probe_positions(Decoder& model, const ag::Indices& fit_ids,
                                        const ag::Indices& test_ids, double ridge) {
  ag::check(fit_ids.shape.size() == 2 && test_ids.shape.size() == 2 &&
                fit_ids.shape[1] == test_ids.shape[1],
            "probe_positions", "fit and test ids must be [B, T] of one length, got ",
            ag::shape_string(fit_ids.shape), " and ", ag::shape_string(test_ids.shape));
  // TASK 7.4 begin: the NoPE position probe
  const std::vector<ag::Tensor> fit_states = layer_states(model, fit_ids);
  const std::vector<ag::Tensor> test_states = layer_states(model, test_ids);
  std::vector<ProbeScore> scores;
  for (std::size_t l = 0; l < fit_states.size(); ++l) {
    const LinearProbe probe = fit_linear_probe(position_data(fit_states[l]), ridge);
    scores.push_back(score_probe(probe, position_data(test_states[l])));
  }
  return scores;
  // TASK 7.4 end
}
// [probe-positions]

}  // namespace pe
