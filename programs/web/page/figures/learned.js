// Chapter 3's live figure: a learned table of positions trained in the page (the fast model,
// training.js), and the cosine similarity of its rows redrawn at every evaluation: what the
// model has made of "position" so far.
"use strict";
PeLive.figure("learned", {
  title: "train a learned table and watch its rows",
  tryThis: "train on ShiftK and watch neighbouring rows grow alike (a band along the diagonal); " +
           "then train on AlternatingChar, which needs no position, and see how little the table moves.",
  build(fig) {
    let similarity = null;  // below the panel's curves and attention
    async function drawTable() {
      const answer = await PeLive.model("inspect", 32);
      if (answer.error || !answer.table) return;
      const [L, C] = answer.table.shape, t = answer.table.values;
      const norms = Array.from({length: L}, (_, i) => Math.hypot(...t.slice(i * C, (i + 1) * C)) || 1);
      const values = [];
      for (let i = 0; i < L; i++)
        for (let j = 0; j < L; j++) {
          let dot = 0;
          for (let c = 0; c < C; c++) dot += t[i * C + c] * t[j * C + c];
          values.push(dot / (norms[i] * norms[j]));
        }
      PePlots.heatmap(similarity, {rows: L, cols: L, values, min: -1, max: 1, diverging: true,
                                   title: "cosine similarity of rows i and j", xLabel: "position j",
                                   yLabel: "position i"});
    }
    PeTraining.panel(fig, {
      encodings: ["learned"],
      defaults: {encoding: "learned", task: "shiftk", steps: 400},
      slice(state) { if (state.history.length) drawTable(); },
      trained() { drawTable(); },
    });
    similarity = fig.canvas(420, 380, "cosine similarity of the learned table's rows");
  },
});
