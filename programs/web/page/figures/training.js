// Chapter 7's live figure: the fast model trained in the page on the task and encoding chosen,
// its attention redrawn as it learns (training.js does the work).
"use strict";
PeLive.figure("training", {
  title: "train the one-layer model in this page",
  tryThis: "train ShiftK with encoding none (it stays near 17%, its attention spread over the past), " +
           "then with RoPE, whose attention finds the diagonal four back within a few hundred steps.",
  build(fig) {
    PeTraining.panel(fig, {defaults: {encoding: "none", task: "shiftk"}});
  },
});
