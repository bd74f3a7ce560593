// Chapter 9's live figure: the bias b(d) that KERPLE, FIRE and the dynamic position bias add to
// a score, against the distance d = i - j, with ALiBi's line for reference. Every number comes
// from the chapter's own classes (programs/web/live_distance.cpp); this file only draws.
"use strict";
PeLive.figure("distance_bias", {
  title: "the learned distance functions' bias against the distance",
  tryThis: "KERPLE's power form with r2 = 1 is ALiBi's straight line; move FIRE's query i past L " +
           "and its curve is squeezed into the same [0, -4] instead of reaching further; " +
           "a small c makes FIRE nearly linear, a large one drops at once and then flattens.",
  build(fig) {
    fig.slider("distances", "distances d < ", {min: 8, max: 1024, step: 8, value: 128});
    fig.select("form", "KERPLE form", [["log", "log: -r1 log(1 + r2 d)"], ["power", "power: -r1 d^r2"]], "log");
    fig.slider("r1", "r1", {min: 0.05, max: 4, step: 0.05, value: 1});
    fig.slider("r2", "r2", {min: 0.05, max: 1.95, step: 0.05, value: 1});
    fig.slider("log10c", "FIRE c = 10^", {min: -3, max: 1, step: 0.25, value: -1});
    fig.slider("threshold", "FIRE L", {min: 1, max: 1024, value: 512});
    fig.slider("query", "FIRE query i", {min: 0, max: 4096, value: 127});
    fig.select("f", "FIRE f", [["linear", "linear f(u) = -4u"], ["initial", "MLP at its initial weights"]], "linear");
    fig.slider("seed", "MLPs' seed", {min: 1, max: 20, value: 1});
    fig.checkbox("log_distance", "DPB reads log(1 + d)", false);
    fig.slider("alibi_head", "ALiBi head of 8", {min: 1, max: 8, value: 3});
    const biasCanvas = fig.canvas(760, 340, "bias b(d) of each distance function against the distance d");
    const inputCanvas = fig.canvas(760, 200, "FIRE's input u(d) = psi(d) / psi(max(L, i)) against d");
    async function draw() {
      const v = fig.values();
      const c = Math.pow(10, v.log10c);
      const answer = await PeLive.call("distance", {
        distances: v.distances,
        kerple: {form: v.form, r1: v.r1, r2: v.r2},
        fire: {c, threshold: v.threshold, query: v.query, f: v.f, seed: v.seed},
        dpb: {log_distance: v.log_distance, seed: v.seed},
        alibi: {heads: 8, head: v.alibi_head}});
      if (answer.error) return fig.failed(answer.error);
      const fire = answer.fire;
      PePlots.lines(biasCanvas, {
        series: [
          {name: "KERPLE (" + v.form + ")", x: answer.distance, y: answer.kerple, width: 2.5},
          {name: "FIRE at query " + v.query + (v.f === "linear" ? ", f(u) = -4u" : ", initial MLP"),
           x: fire.distance, y: fire.bias, width: 2.5},
          {name: "dynamic position bias (initial MLP)", x: answer.distance, y: answer.dpb, width: 2},
          {name: "ALiBi, slope 1/" + PePlots.format(1 / answer.alibi_slope), x: answer.distance,
           y: answer.alibi, dashed: true, colour: "#888"}],
        xRange: [0, v.distances - 1],
        xLabel: "distance d = i - j", yLabel: "bias b(d)", title: "one head's bias against the distance"});
      PePlots.lines(inputCanvas, {
        series: [{name: "FIRE's u(d) at query " + v.query, x: fire.distance, y: fire.input, width: 2}],
        xRange: [0, v.distances - 1], yRange: [0, 1],
        xLabel: "distance d", yLabel: "u(d)", title: "what FIRE's f reads: always in [0, 1]"});
      const last = fire.input[fire.input.length - 1];
      fig.status("KERPLE at d = " + (v.distances - 1) + ": " + PePlots.format(answer.kerple[v.distances - 1]) +
                 "; FIRE's u reaches " + PePlots.format(last) + " at d = " + (fire.distance.length - 1) +
                 (v.query < v.threshold ? " (i < L: normalised by psi(L))" : " (i >= L: normalised by psi(i))") + ".");
      fig.result({values: v, c, distance: answer.distance, kerple: answer.kerple, fire,
                  dpb: answer.dpb, alibi: answer.alibi, alibi_slope: answer.alibi_slope});
    }
    fig.onChange(draw);
    draw();
  },
});
