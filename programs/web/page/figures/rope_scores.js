// Chapter 5's second live figure: a query and a key turned by RoPE at every position (the
// attention part's rotate hook, programs/web/live_rope.cpp) and their score against the offset, from
// three absolute positions, under chapter 8's scaling rules.
"use strict";
PeLive.figure("rope_scores", {
  title: "the score of a turned query and key depends on their offset alone",
  tryThis: "the three curves lie on each other at any base; choose linear interpolation with scale 4 and " +
           "the curve stretches four times, which is how it reaches four times further.",
  build(fig) {
    fig.slider("log10base", "base 10^", {min: 1, max: 6, step: 0.5, value: 4});
    fig.slider("dim", "head width d", {min: 4, max: 128, step: 4, value: 32});
    fig.slider("offsets", "offsets", {min: 16, max: 512, step: 16, value: 128});
    fig.select("scaling", "scaling rule", [["none", "none"], ["linear", "linear interpolation"],
                                           ["ntk", "NTK-aware"], ["dynamic", "dynamic NTK"], ["yarn", "YaRN"]], "none");
    fig.slider("scale", "scale s", {min: 1, max: 16, value: 4});
    fig.slider("seed", "q and k seed", {min: 1, max: 20, value: 1});
    const canvas = fig.canvas(760, 320, "score of the query at m + r and the key at m against r");
    const starts = [0, 40, 200];
    async function request(v, scaling) {
      const options = {base: String(Math.pow(10, v.log10base))};
      if (scaling !== "none") options.scaling = scaling;
      if (["linear", "ntk", "yarn"].includes(scaling)) options.scale = String(v.scale);
      if (["dynamic", "yarn"].includes(scaling)) options.train_length = "32";
      return PeLive.call("rope", {dim: v.dim, length: v.offsets, starts, options, seed: v.seed});
    }
    async function draw() {
      const v = fig.values();
      const [plain, scaled] = await Promise.all([request(v, "none"), request(v, v.scaling)]);
      const answer = v.scaling === "none" ? plain : scaled;
      if (answer.error) return fig.failed(answer.error);
      const series = starts.map((m, k) => ({name: "key at " + m + (v.scaling === "none" ? "" : ", " + v.scaling),
                                            x: answer.offsets, y: answer.scores[k], dashed: k > 0,
                                            width: k === 0 ? 3 : 1.6}));
      if (v.scaling !== "none") series.push({name: "no scaling", x: plain.offsets, y: plain.scores[0], colour: "#aaa"});
      PePlots.lines(canvas, {series, xLabel: "offset r (query at m + r, key at m)", yLabel: "q . k / sqrt(d)",
                             title: "score against the offset"});
      let spread = 0;
      answer.scores.forEach(row => row.forEach((s, r) => { spread = Math.max(spread, Math.abs(s - answer.scores[0][r])); }));
      fig.status("largest difference between the three curves: " + spread.toExponential(1) +
                 (v.scaling === "dynamic" ? " (dynamic NTK scales with the length of the pass, trained at 32)" : ""));
      fig.result({scaling: v.scaling, spread, offsets: answer.offsets, scores: answer.scores});
    }
    fig.onChange(draw);
    draw();
  },
});
