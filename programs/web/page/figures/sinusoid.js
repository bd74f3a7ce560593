// Chapter 2's live figure: the sinusoidal table (sinusoidal_table, through `pe inspect
// sinusoidal`) for any base and width, and the dot product of two positions' rows against their
// offset, from two starting positions.
"use strict";
PeLive.figure("sinusoid", {
  title: "the sinusoid table and the dot product against the offset",
  tryThis: "lower the base to 100: the slowest wavelength shrinks and the dot product comes back up " +
           "within a few hundred offsets; at any base and width the curve from position 100 lies on the one from 0.",
  build(fig) {
    fig.slider("log10base", "base 10^", {min: 1, max: 6, step: 0.5, value: 4});
    fig.slider("width", "width C", {min: 8, max: 512, step: 8, value: 256});
    fig.slider("offsets", "offsets", {min: 32, max: 512, step: 32, value: 256});
    const table = fig.canvas(760, 300, "the table: one column per position, one row per dimension");
    const dots = fig.canvas(760, 260, "dot product of the rows of positions m and m + r against r");
    async function draw() {
      const v = fig.values(), base = String(Math.pow(10, v.log10base));
      // Positions 0 .. 100 + offsets - 1: the dot products from position 0 and from 100.
      const starts = [0, 100], L = starts[1] + v.offsets, C = v.width;
      const answer = await PeLive.call("inspect", {encoding: "sinusoidal", length: L, dim: C, options: {base}});
      if (answer.error) return fig.failed(answer.error);
      const pe = answer.pe.values;
      // Transposed, so that position runs along the page as in chapter 2's figure.
      const transposed = [];
      for (let c = 0; c < C; c++) for (let p = 0; p < L; p++) transposed.push(pe[p * C + c]);
      PePlots.heatmap(table, {rows: C, cols: L, values: transposed, min: -1, max: 1, diverging: true,
                              title: "PE(pos, i), base " + PePlots.format(Number(base)) + ", width " + C,
                              xLabel: "position", yLabel: "dimension i"});
      const series = starts.map((m, k) => {
        const x = [], y = [];
        for (let r = 0; r < v.offsets; r++) {
          let dot = 0;
          for (let c = 0; c < C; c++) dot += pe[m * C + c] * pe[(m + r) * C + c];
          x.push(r);
          y.push(dot);
        }
        return {name: "from position " + m, x, y, dashed: k === 1};
      });
      PePlots.lines(dots, {series, xLabel: "offset r", yLabel: "PE(m) . PE(m + r)",
                           title: "the dot product depends on the offset alone"});
      let spread = 0;
      series[1].y.forEach((y, r) => { spread = Math.max(spread, Math.abs(y - series[0].y[r])); });
      fig.status("base " + base + ", width " + C + ": wavelengths from 2 pi to " +
                 PePlots.format(2 * Math.PI * Number(base)) + " positions; the dot product starts at C/2 = " +
                 C / 2 + ", is " + series[0].y[1].toFixed(1) + " at offset 1, and the two curves differ by at most " +
                 spread.toExponential(1) + ".");
      fig.result({base, width: C, length: L, pe});
    }
    fig.onChange(draw);
    draw();
  },
});
