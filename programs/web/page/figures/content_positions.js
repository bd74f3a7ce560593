// Chapter 10's live figure: a sequence the reader types, one token per character, and the
// positions its content gives: CoPE's p_ij, counted by gates that open on the characters the
// reader chooses, and the forgetting gate's bias D_ij, the sum of log f between key and query,
// beside ALiBi's straight line (the same f at every token). Every number comes from chapter
// 10's own functions (programs/web/live_content.cpp); this file only draws.
"use strict";
(function () {
  // A space is drawn as an open box, so that the matrices' labels show where it is.
  const shown = c => (c === " " ? "\u2423" : c);

  PeLive.figure("content_positions", {
    title: "positions counted by the content: CoPE's p_ij and the forgetting gate's decay",
    tryThis: "with '.' chosen, CoPE counts sentences instead of characters: the keys of one sentence share " +
             "a position; set f on '.' to 0.01 and the forgetting gate all but erases what lies before the last " +
             "full stop, where ALiBi's line decays at one rate everywhere. Choose aeiou to count vowels.",
    build(fig) {
      fig.text("text", "text (up to 32 characters)", "the cat sat. a dog ran. it hid", 34);
      fig.text("chosen", "chosen characters", ".", 10);
      fig.slider("sharpness", "CoPE's score on a chosen key +s (others -s), s", {min: 0, max: 12, step: 0.5, value: 6});
      fig.slider("f_chosen", "f on a chosen character", {min: 0.01, max: 0.999, step: 0.001, value: 0.1});
      fig.slider("f_other", "f on the others", {min: 0.5, max: 0.999, step: 0.001, value: 0.95});
      const maps = fig.box();
      const copeMap = fig.canvas(400, 380, "CoPE's position p_ij of every key j seen from every query i", maps);
      const foxMap = fig.canvas(400, 380, "the forgetting gate's bias D_ij of every key j seen from every query i", maps);
      const rows = fig.box();
      const copeRow = fig.canvas(400, 250, "the last query's CoPE positions against the key, with the token distance", rows);
      const foxRow = fig.canvas(400, 250, "the last query's forgetting-gate bias against the key, with ALiBi's line", rows);

      async function draw() {
        const v = fig.values();
        const answer = await PeLive.call("content", {text: v.text, chosen: v.chosen, sharpness: v.sharpness,
                                                     f_chosen: v.f_chosen, f_other: v.f_other});
        if (answer.error) return fig.failed(answer.error);
        const T = answer.length, labels = answer.tokens.map(shown), last = T - 1;
        const keys = Array.from({length: T}, (_, j) => j);
        // The keys after the query, which the causal mask hides, are grey.
        const masked = m => m.map((x, k) => (k % T > Math.floor(k / T) ? NaN : x));
        const lastRow = m => m.slice(last * T, T * T);
        const p = answer.cope.positions, D = masked(answer.fox.bias);
        const lowest = Math.min(...D.filter(Number.isFinite));
        PePlots.heatmap(copeMap, {rows: T, cols: T, values: masked(p), numbers: true, min: 0,
                                  max: Math.max(1, ...p), rowLabels: labels, colLabels: labels,
                                  title: "CoPE: p_ij = g_ij + ... + g_ii", xLabel: "key j", yLabel: "query i"});
        PePlots.heatmap(foxMap, {rows: T, cols: T, values: D, numbers: true, min: Math.min(lowest, -1e-9), max: 0,
                                 rowLabels: labels, colLabels: labels,
                                 title: "forgetting gate: D_ij = log f_j+1 + ... + log f_i", xLabel: "key j",
                                 yLabel: "query i"});
        PePlots.lines(copeRow, {
          series: [{name: "CoPE's p, query " + last, x: keys, y: lastRow(p), dots: true, width: 2.5},
                   {name: "every gate open: i - j + 1", x: keys, y: lastRow(answer.cope.count), dashed: true,
                    colour: "#888"}],
          xRange: [0, Math.max(1, last)], xLabel: "key j", yLabel: "position p", title: "the last query's row"});
        PePlots.lines(foxRow, {
          series: [{name: "forgetting gate, query " + last, x: keys, y: lastRow(answer.fox.bias), dots: true,
                    width: 2.5, colour: PePlots.COLORS[1]},
                   {name: "ALiBi: f = " + v.f_other + " everywhere", x: keys, y: lastRow(answer.alibi.bias),
                    dashed: true, colour: "#888"}],
          xRange: [0, Math.max(1, last)], legend: "bottom", xLabel: "key j", yLabel: "bias D", title: "the last query's row"});
        const counted = answer.chosen.filter(x => x).length;
        fig.status(counted + " of " + T + " characters chosen. From the last query, CoPE puts the first key at " +
                   PePlots.format(p[last * T]) + " (the token distance counts " + T + "); the forgetting gate " +
                   "biases it by " + PePlots.format(answer.fox.bias[last * T]) + ", ALiBi with slope " +
                   PePlots.format(answer.alibi.slope) + " by " + PePlots.format(answer.alibi.bias[last * T]) + ".");
        fig.result(Object.assign({values: v}, answer));
      }
      fig.onChange(draw);
      draw();
    },
  });
})();
