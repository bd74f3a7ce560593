// The training panel of the live pages (chapters 3, 7, 8 and 12): the fast model of `pe table
// --fast` (width 64, feed-forward 256, 400 steps at 5e-3) trained in the page's Web Worker on
// the task and encoding chosen, with a progress bar, a stop button, the loss and accuracy
// curves, and the attention on a held-out sequence redrawn after every slice of steps.
"use strict";
(function () {
  if (window.PeTraining) return;

  const ENCODINGS = [["none", "none (chapter 1)"], ["sinusoidal", "sinusoidal (2)"], ["learned", "learned (3)"],
                     ["shaw", "Shaw (4)"], ["xl", "Transformer-XL (4)"], ["t5", "T5 (4)"], ["rope", "RoPE (5)"],
                     ["alibi", "ALiBi (6)"]];
  const TASKS = [["shiftk", "ShiftK (k = 4)"], ["alternating", "AlternatingChar"], ["copy", "Copy"],
                 ["recall", "AssociativeRecall"], ["charlm", "characters (the GPL's text)"]];
  const SYNTHETIC = ["shiftk", "alternating", "copy", "recall"];  // the panel's tasks by default
  const SLICE = 10;  // steps between two redraws (a few tenths of a second)

  /// The configuration `pe table --fast` trains (lab/table.cpp, fast_table_config),
  /// with the panel's choices.
  function fastConfig(v) {
    return {task: v.task, encoding: v.encoding, layers: Number(v.layers), heads: Number(v.heads),
            seed: Number(v.seed), steps: Number(v.steps), width: 64, ffn_width: 256, warmup: 50,
            lr: 5e-3, eval_every: 50, eval_sequences: 64, length: 32, batch: 64};
  }

  function drawCurves(canvas, losses, history, steps) {
    const evalSteps = history.map(h => h.step);
    PePlots.lines(canvas, {
      title: "training loss (each step), held-out loss and accuracy (every 50 steps)",
      xLabel: "step", yLabel: "cross-entropy (log scale)", logY: true, xRange: [0, steps], legend: "middle",
      right: {range: [0, 1], label: "held-out accuracy"},
      series: [
        {name: "training loss", x: losses.map((_, i) => i + 1), y: losses, colour: "#1f77b4", width: 1},
        {name: "held-out loss", x: evalSteps, y: history.map(h => h.eval_loss), colour: "#ff7f0e", dots: true},
        {name: "held-out accuracy", x: evalSteps, y: history.map(h => h.eval_accuracy), colour: "#2ca02c",
         dots: true, axis: "right"},
      ]});
  }

  function drawAttention(box, fig, answer) {
    if (answer.error) return;
    const T = answer.length;
    const many = answer.panels.length > 2;
    while (box.children.length > answer.panels.length) box.removeChild(box.lastChild);
    answer.panels.forEach((p, k) => {
      let c = box.children[k];
      if (!c) c = fig.canvas(many ? 260 : 420, many ? 240 : 380, "attention weights", box);
      c.setAttribute("aria-label", "attention weights of layer " + p.layer + ", head " + p.head +
                     " on a held-out sequence: row = query, column = key");
      PePlots.heatmap(c, {rows: T, cols: T, values: p.weights, min: 0, max: 1,
                          title: "layer " + p.layer + ", head " + p.head + ": attention",
                          xLabel: "key", yLabel: "query", rowLabels: answer.tokens, colLabels: answer.tokens});
    });
  }

  /// Adds the panel to a figure. options: {encodings (values allowed, default all), tasks (values
  /// allowed, default the synthetic ones; "charlm" is chapter 12's character model), defaults
  /// {encoding, task, heads, layers, seed, steps}, trained(state) called when a run ends,
  /// slice(state) after every slice}. Returns {values(), running()}.
  function panel(fig, options) {
    const d = Object.assign({encoding: "rope", task: "shiftk", heads: "1", layers: "1", seed: 1, steps: 400},
                            options.defaults || {});
    const allowed = options.encodings || ENCODINGS.map(e => e[0]);
    fig.select("encoding", "encoding", ENCODINGS.filter(e => allowed.includes(e[0])), d.encoding);
    const tasks = options.tasks || SYNTHETIC;
    fig.select("task", "task", TASKS.filter(t => tasks.includes(t[0])), d.task);
    fig.select("heads", "heads", [["1", "1"], ["2", "2"], ["4", "4"], ["8", "8"]], d.heads);
    fig.select("layers", "layers", [["1", "1"], ["2", "2"], ["4", "4"], ["8", "8"]], d.layers);
    fig.number("seed", "seed", {min: 0, max: 1000000, value: d.seed});
    fig.number("steps", "steps", {min: 10, max: 3000, step: 10, value: d.steps});
    const trainButton = fig.button("Train", start);
    const stopButton = fig.button("Stop", () => stop && stop());
    stopButton.disabled = true;
    const progress = document.createElement("progress");
    progress.value = 0;
    progress.max = 1;
    progress.setAttribute("aria-label", "training progress");
    fig.controlsBox.appendChild(progress);
    const curves = fig.canvas(760, 300, "training loss, held-out loss and held-out accuracy against the step");
    const attentionBox = fig.box("pe-live-grid");
    let stop = null, simd = "";
    PeLive.call("build").then(b => { simd = b.simd || ""; });

    function start() {
      const v = fig.values(), config = fastConfig(v);
      if (!(config.steps >= 10 && config.steps <= 3000) || !(config.seed >= 0)) {
        fig.failed("steps must be from 10 to 3000 and the seed a whole number >= 0");
        return;
      }
      const losses = [], history = [];
      const startedAt = performance.now();
      trainButton.disabled = true;
      stopButton.disabled = false;
      progress.max = config.steps;
      progress.value = 0;
      fig.root.dataset.state = "training";
      fig.status("starting: " + config.encoding + " on " + config.task + ", " + config.steps + " steps ...");
      stop = PeLive.train(config, {slice: SLICE, attention: config.length}, {
        progress(state) {
          if (state.error) return;
          losses.push(...state.losses);
          history.push(...state.history);
          progress.value = state.step;
          drawCurves(curves, losses, history, config.steps);
          const last = history[history.length - 1];
          fig.status("step " + state.step + " of " + config.steps + ": training loss " +
                     PePlots.format(losses[losses.length - 1]) +
                     (last ? ", held-out accuracy " + (100 * last.eval_accuracy).toFixed(1) + "% at step " + last.step : "") +
                     " (" + ((performance.now() - startedAt) / 1000).toFixed(1) + " s)");
          if (options.slice) options.slice(state);
        },
        attention(answer) {
          drawAttention(attentionBox, fig, answer);
        },
        done(state) {
          trainButton.disabled = false;
          stopButton.disabled = true;
          stop = null;
          if (state.error) return fig.failed(state.error);
          const seconds = (performance.now() - startedAt) / 1000;
          const last = history[history.length - 1];
          const finished = state.done;
          fig.status((finished ? "trained: " : "stopped at step " + state.step + ": ") + config.encoding + " on " +
                     config.task + (last ? ", held-out accuracy " + (100 * last.eval_accuracy).toFixed(1) +
                     "%, loss " + PePlots.format(last.eval_loss) + " at step " + last.step : "") + ", " +
                     seconds.toFixed(1) + " s in this browser (" + simd + " kernels)");
          fig.result({config, history, steps: state.step, seconds, simd, finished});
          fig.root.dataset.state = finished ? "trained" : "stopped";
          if (options.trained) options.trained(state, config);
        },
      });
    }
    return {running: () => stop !== null};
  }

  window.PeTraining = {panel, fastConfig};
})();
