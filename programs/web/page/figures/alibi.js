// Chapter 6's live figure: ALiBi's slopes and bias matrices for any number of heads, from
// alibi_slopes and alibi_bias (through `pe inspect alibi`, run in the page).
"use strict";
PeLive.figure("alibi", {
  title: "ALiBi's slopes and biases for any number of heads",
  tryThis: "go from 8 heads to 1 (its only slope is 1/256, almost flat over 32 tokens), then to 6, " +
           "which is not a power of two and takes every other slope of 8's neighbour.",
  build(fig) {
    const heads = fig.slider("heads", "heads H", {min: 1, max: 16, value: 8});
    const length = fig.slider("length", "positions", {min: 4, max: 32, value: 12});
    const slopesCanvas = fig.canvas(640, 200, "bar chart of the heads' slopes");
    const grid = fig.box("pe-live-grid");
    async function draw() {
      const v = fig.values();
      const answer = await PeLive.call("inspect", {encoding: "alibi", heads: v.heads, length: v.length, dim: 64 * v.heads});
      if (answer.error) return fig.failed(answer.error);
      const slopes = answer.slopes.values, T = v.length, bias = answer.bias.values;
      PePlots.bars(slopesCanvas, {values: slopes, labels: slopes.map((s, h) => "h" + (h + 1)),
                                  title: "the slope of each head",
                                  yLabel: "slope", yRange: [0, Math.max(...slopes) * 1.1]});
      grid.textContent = "";
      slopes.forEach((slope, h) => {
        const cell = document.createElement("div");
        grid.appendChild(cell);
        const c = fig.canvas(300, 230, "bias matrix of head " + (h + 1), cell);
        // As chapter 6's figure: the upper triangle is the bonus on future keys that the
        // causal mask then removes.
        const values = bias.slice(h * T * T, (h + 1) * T * T), edge = slope * (T - 1);
        PePlots.heatmap(c, {rows: T, cols: T, values, numbers: T <= 8, min: -edge, max: edge, diverging: true,
                            title: "head " + (h + 1) + ": slope 1/" + PePlots.format(1 / slope),
                            xLabel: "key j", yLabel: "query i"});
      });
      fig.status(v.heads + (v.heads === 1 ? " head" : " heads") + ": slopes from 1/" +
                 PePlots.format(1 / slopes[0]) + " to 1/" + PePlots.format(1 / slopes[slopes.length - 1]) +
                 "; bias(i, j) = -slope (i - j), whose upper triangle the causal mask removes.");
      fig.result({heads: v.heads, length: T, slopes, bias});
    }
    fig.onChange(draw);
    draw();
  },
});
