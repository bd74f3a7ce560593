// Chapter 12's live figure: a character model trained in the page at 32 characters
// (training.js, on the charlm task's text), then reading a long stretch of that text one
// character at a time through chapter 12's window cache (stream_bits): S sinks and the last W
// characters, at their places in the cache or at their positions in the stream. Each stream
// adds two curves, the loss per position (averaged over each 32 characters) and its running
// mean, so that S = 0 and S = 4 can be seen side by side as the stream goes far past 32.
"use strict";
PeLive.figure("stream", {
  title: "chapter 12: stream a text through a window cache with attention sinks",
  tryThis: "train RoPE on the characters (a minute or so), press \"S = 0, then S\" (the window alone, then " +
           "with the first 4 characters kept); then keep the keys at their places in the stream, and try W = 60, " +
           "a cache longer than the 32 characters the model was trained at.",
  build(fig) {
    const SMOOTH = 32;  // characters averaged per point of the loss curve
    const runs = [];
    let trainedName = null;
    PeTraining.panel(fig, {
      tasks: ["charlm"],
      encodings: ["rope", "alibi", "none"],
      defaults: {encoding: "rope", task: "charlm", heads: "4", layers: "2", steps: 400},
      trained(state, config) {
        trainedName = config.encoding + ", " + config.layers + " layers, " + config.heads + " heads";
        runs.length = 0;
        streamButton.disabled = false;
        compareButton.disabled = false;
      },
    });
    fig.slider("sinks", "sinks S", {min: 0, max: 16, value: 4});
    fig.slider("window", "window W", {min: 4, max: 256, value: 28});
    fig.select("positions", "positions of the kept keys",
               [["cache", "their places in the cache (StreamingLLM)"], ["original", "their places in the stream"]],
               "cache");
    fig.select("length", "stream length", [["256", "256"], ["512", "512"], ["1024", "1024"], ["2048", "2048"],
                                           ["4096", "4096"]], "1024");
    const streamButton = fig.button("Stream", () => run([fig.values().sinks]));
    const compareButton = fig.button("S = 0, then S", () => run([0, fig.values().sinks]));
    fig.button("Clear", () => { runs.length = 0; draw(); });
    streamButton.disabled = compareButton.disabled = true;
    const lossPlot = fig.canvas(760, 300, "loss per position of the stream, averaged over each 32 characters");
    const meanPlot = fig.canvas(760, 260, "running mean of the loss against the position in the stream");

    function smoothed(bits) {
      const x = [], y = [];
      for (let start = 0; start < bits.length; start += SMOOTH) {
        const part = bits.slice(start, start + SMOOTH);
        x.push(start + part.length / 2);
        y.push(part.reduce((a, b) => a + b, 0) / part.length);
      }
      return {x, y};
    }

    function draw() {
      const longest = Math.max(64, ...runs.map(r => r.bits.length));
      const top = Math.max(1, ...runs.map(r => Math.max(...smoothed(r.bits).y))) * 1.3;  // room for the legend
      const train = runs.length ? runs[0].train_length : 32;
      const marker = {name: "trained at " + train, x: [train, train], y: [0, top], colour: "#999", dashed: true};
      PePlots.lines(lossPlot, {
        title: "loss of each prediction (bits, mean of each " + SMOOTH + " characters)",
        xLabel: "position in the stream", yLabel: "bits per character", xRange: [0, longest], yRange: [0, top],
        series: [marker, ...runs.map(r => Object.assign({name: r.label}, smoothed(r.bits)))]});
      const meanTop = Math.max(1, ...runs.map(r => Math.max(...r.running_mean.slice(8)))) * 1.3;
      PePlots.lines(meanPlot, {
        title: "running mean of the loss", xLabel: "position in the stream", yLabel: "bits per character",
        xRange: [0, longest], yRange: [0, meanTop],
        series: [Object.assign({}, marker, {y: [0, meanTop]}),
                 ...runs.map(r => ({name: r.label, x: r.running_mean.map((_, t) => t), y: r.running_mean}))]});
    }

    async function run(sinksList) {
      const v = fig.values();
      streamButton.disabled = compareButton.disabled = true;
      fig.root.dataset.state = "streaming";
      const answers = [];
      for (const sinks of sinksList) {
        const request = {sinks, window: v.window, positions: v.positions, length: Number(v.length), seed: 1};
        fig.status("streaming " + v.length + " characters through " + trainedName + ", S = " + sinks + ", W = " +
                   v.window + " (" + v.positions + " positions) ...");
        const answer = await PeLive.model("stream", request);
        if (answer.error) {
          streamButton.disabled = compareButton.disabled = false;
          return fig.failed(answer.error);
        }
        answer.label = trainedName + ", S = " + answer.sinks + ", W = " + answer.window + ", " + answer.positions;
        answers.push(answer);
        runs.push(answer);
      }
      streamButton.disabled = compareButton.disabled = false;
      draw();
      const fmt = x => (x === null ? "-" : x.toFixed(3));
      fig.status(answers.map(a => "S = " + a.sinks + ": " + fmt(a.mean_within) + " bits/char within the first " +
                                  a.train_length + ", " + fmt(a.mean_past) + " past them").join("; ") +
                 " (W = " + v.window + ", " + v.positions + " positions, " + v.length + " characters)");
      fig.result({model: trainedName, runs: answers.map(a => {
        const copy = Object.assign({}, a);
        delete copy.text;
        return copy;
      })});
      fig.root.dataset.state = "streamed";
    }
  },
});
