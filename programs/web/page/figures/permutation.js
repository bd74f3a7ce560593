// Chapter 1's live figure: an untrained decoder without positions reads a sentence and the same
// words in another order (programs/web/live_permutation.cpp, chapter 1's experiment one sentence at a
// time): without the causal mask its outputs are the first sentence's, reordered.
"use strict";
(function () {
  PeLive.figure("permutation", {
    title: "permute the words, and the outputs permute with them",
    tryThis: "reverse dog bites man into man bites dog: without the causal mask the outputs are the same " +
             "vectors in the new order (a difference of float32 round-off); tick the mask and they are not.",
    build(fig) {
      const sentence = fig.text("sentence", "sentence", "dog bites man", 28);
      const order = fig.text("order", "new order (positions)", "2 1 0", 12);
      const causal = fig.checkbox("causal", "causal mask", false);
      fig.button("Reverse", () => { order.value = reversed(words().length); fig.changed(); });
      fig.button("Shuffle", () => { order.value = shuffled(words().length); fig.changed(); });
      const row = fig.box();
      const left = fig.canvas(250, 210, "the outputs of the sentence, one row per word", row);
      const right = fig.canvas(250, 210, "the outputs of the reordered sentence", row);
      const gap = fig.canvas(250, 210, "the first outputs reordered, minus the outputs of the reordered sentence", row);

      function words() {
        return sentence.value.trim().split(/\s+/).filter(w => w);
      }
      function reversed(n) {
        return Array.from({length: n}, (_, i) => n - 1 - i).join(" ");
      }
      function shuffled(n) {
        const a = Array.from({length: n}, (_, i) => i);
        for (let i = n - 1; i > 0; i--) {
          const j = Math.floor(Math.random() * (i + 1));
          [a[i], a[j]] = [a[j], a[i]];
        }
        return a.join(" ");
      }
      // The first 24 of the 256 numbers of each output: enough to see the rows move.
      function rows(matrix) {
        return matrix.flatMap(r => r.slice(0, 24));
      }

      async function draw() {
        const w = words().map(x => x.toLowerCase());
        // The sentence's own words are the vocabulary, numbered as they first appear: for
        // "dog bites man", dog = 0, bites = 1, man = 2, as in chapter 1's experiment.
        const vocabulary = [...new Set(w)];
        const o = order.value.trim().split(/[\s,]+/).filter(x => x).map(Number);
        const request = {words: w.map(x => vocabulary.indexOf(x)), order: o, causal: causal.checked, seed: 1,
                         vocab: vocabulary.length};
        const answer = await PeLive.call("permutation", request);
        if (answer.error) return fig.failed(answer.error);
        const shuffledWords = o.map(i => w[i]);
        const scale = answer.scale;
        PePlots.heatmap(left, {rows: w.length, cols: 24, values: rows(answer.original), diverging: true,
                               min: -scale, max: scale, rowLabels: w, title: w.join(" "),
                               xLabel: "first 24 of 256 numbers"});
        PePlots.heatmap(right, {rows: w.length, cols: 24, values: rows(answer.permuted), diverging: true,
                                min: -scale, max: scale, rowLabels: shuffledWords,
                                title: shuffledWords.join(" "), xLabel: "first 24 of 256 numbers"});
        const difference = answer.reordered.map((r, i) => r.map((x, c) => x - answer.permuted[i][c]));
        PePlots.heatmap(gap, {rows: w.length, cols: 24, values: rows(difference), diverging: true,
                              min: -scale, max: scale, rowLabels: shuffledWords, title: "reordered first minus second",
                              xLabel: "same colour scale"});
        const same = answer.max_difference < 1e-5 * scale;
        fig.status("largest difference between the reordered outputs and the outputs of the reordered " +
                   "sentence: " + answer.max_difference.toExponential(2) + " (outputs of size " + scale.toFixed(2) +
                   "): " + (same ? "the same vectors, reordered; attention cannot tell the two orders apart."
                                 : "different vectors: with the mask each word sees only the words before it, so order matters."));
        fig.result(Object.assign({request}, answer));
      }
      fig.onChange(draw);
      draw();
    },
  });
})();
