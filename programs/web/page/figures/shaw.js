// Chapter 4's live figure: Shaw's clipped relative index clip(j - i, -k, k) + k of every
// (query, key) pair (shaw_clipped_index, through `pe inspect shaw`): the row of the table of
// relative vectors that the pair uses.
"use strict";
PeLive.figure("shaw", {
  title: "Shaw's clipped index",
  tryThis: "set the clipping distance k to 2: every key more than 2 positions back shares one vector, " +
           "so the model sees the near past exactly and the far past as one blur.",
  build(fig) {
    fig.slider("max_distance", "clipping distance k", {min: 1, max: 16, value: 4});
    fig.slider("positions", "positions", {min: 4, max: 32, value: 12});
    const canvas = fig.canvas(520, 460, "clipped index of every query and key");
    async function draw() {
      const v = fig.values();
      const options = {max_distance: String(v.max_distance)};
      const answer = await PeLive.call("inspect", {encoding: "shaw", length: v.positions, options});
      if (answer.error) return fig.failed(answer.error);
      const index = answer.index.values, T = v.positions;
      PePlots.heatmap(canvas, {rows: T, cols: T, values: index, numbers: true, min: 0, max: 2 * v.max_distance,
                               title: "clip(j - i, -k, k) + k", xLabel: "key j", yLabel: "query i"});
      fig.status("2k + 1 = " + (2 * v.max_distance + 1) + " relative vectors for keys and as many for values, " +
                 "whatever the length.");
      fig.result({options, length: T, index});
    }
    fig.onChange(draw);
    draw();
  },
});
