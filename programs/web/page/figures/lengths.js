// Chapter 8's live figure: a model trained in the page at 32 tokens (training.js), then
// evaluated at 32 to 256 tokens (evaluate_past_training), with RoPE's scaling rules chosen at
// evaluation time as `pe eval --option` does. Each evaluation adds a line.
"use strict";
PeLive.figure("lengths", {
  title: "train at 32 tokens, evaluate up to 256",
  tryThis: "train RoPE on ShiftK and evaluate it plain, then with NTK-aware scaling at scale 4; " +
           "train the sinusoid or the learned table and see where each one stops.",
  build(fig) {
    const LENGTHS = [32, 48, 64, 96, 128, 192, 256];
    const curves = [];
    let trainedName = null;
    const training = PeTraining.panel(fig, {
      defaults: {encoding: "rope", task: "shiftk"},
      trained(state, config) {
        trainedName = config.encoding + " on " + config.task;
        curves.length = 0;
        evaluate.disabled = false;
      },
    });
    fig.select("scaling", "RoPE scaling at evaluation", [["none", "none"], ["linear", "linear interpolation"],
                                                         ["ntk", "NTK-aware"], ["dynamic", "dynamic NTK"],
                                                         ["yarn", "YaRN"]], "none");
    fig.slider("scale", "scale s", {min: 1, max: 8, value: 4});
    const evaluate = fig.button("Evaluate at 32 to 256", run);
    evaluate.disabled = true;
    const plot = fig.canvas(760, 300, "held-out accuracy against the evaluation length");
    async function run() {
      if (training.running()) return;
      const v = fig.values(), options = {};
      if (v.scaling !== "none") {
        options.scaling = v.scaling;
        if (["linear", "ntk", "yarn"].includes(v.scaling)) options.scale = String(v.scale);
        if (["dynamic", "yarn"].includes(v.scaling)) options.train_length = "32";
      }
      evaluate.disabled = true;
      fig.status("evaluating " + trainedName + " at " + LENGTHS.join(", ") + " tokens ...");
      const answer = await PeLive.model("evaluateLengths", {lengths: LENGTHS, tokens: 4096, options});
      evaluate.disabled = false;
      if (answer.error) return fig.failed(answer.error);
      const ran = answer.lengths.filter(r => r.ran);
      const label = trainedName + (v.scaling === "none" ? "" : ", " + v.scaling +
                                   (options.scale ? " s = " + options.scale : ""));
      curves.push({name: label, x: ran.map(r => r.length), y: ran.map(r => r.accuracy), dots: true});
      PePlots.lines(plot, {series: curves, logX: true, xTicks: LENGTHS, xRange: [32, 256], yRange: [0, 1.02],
                           xLabel: "evaluation length (trained at 32)", yLabel: "held-out accuracy"});
      const refused = answer.lengths.filter(r => !r.ran);
      fig.status(label + ": " + answer.lengths.map(r => r.length + ": " + (r.ran ? (100 * r.accuracy).toFixed(1) + "%"
                                                                                   : "cannot run")).join(", ") +
                 (refused.length ? " (" + refused[0].error + ")" : ""));
      fig.result({lengths: answer.lengths, options, model: trainedName});
      fig.root.dataset.state = "evaluated";
    }
  },
});
