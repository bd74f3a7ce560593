// Chapter 5's first live figure: RoPE's frequencies theta_i = base^(-2i/d) (rope_frequencies,
// through `pe inspect rope`) as the number of turns each plane makes over a window of tokens.
"use strict";
PeLive.figure("rope_planes", {
  title: "which planes turn within a window",
  tryThis: "with a head of 64 and base 10000, count the planes that make a full turn within 32 tokens; " +
           "move the base to 500 and most of them do.",
  build(fig) {
    fig.slider("log10base", "base 10^", {min: 1, max: 6, step: 0.1, value: 4});
    fig.slider("dim", "head width d", {min: 4, max: 128, step: 4, value: 64});
    fig.slider("window", "window (tokens)", {min: 4, max: 512, step: 4, value: 32});
    const canvas = fig.canvas(760, 280, "turns of each rotation plane over the window");
    async function draw() {
      const v = fig.values(), base = String(Math.pow(10, v.log10base).toPrecision(6) * 1);
      const answer = await PeLive.call("inspect", {encoding: "rope", length: 1, dim: v.dim, options: {base}});
      if (answer.error) return fig.failed(answer.error);
      const theta = answer.frequencies.values;
      const turns = theta.map(t => (t * v.window) / (2 * Math.PI));
      const whole = turns.filter(t => t >= 1).length;
      PePlots.bars(canvas, {values: turns.map(t => Math.log10(t)), labels: theta.map((_, i) => String(i)),
                            colours: turns.map(t => (t >= 1 ? "#1f77b4" : "#b0b8c8")),
                            title: "log10 of the turns plane i makes over " + v.window + " tokens (blue: at least one)",
                            xLabel: "plane i", yLabel: "log10 turns", line: {y: 0, label: "one turn"}});
      fig.status(whole + " of " + theta.length + " planes turn at least once within " + v.window +
                 " tokens; the slowest turns once every " + PePlots.format(2 * Math.PI / theta[theta.length - 1]) + " tokens.");
      fig.result({base, dim: v.dim, window: v.window, frequencies: theta});
    }
    fig.onChange(draw);
    draw();
  },
});
