// Chapter 4's live figure: T5's bucket of every (query, key) pair (t5_bucket_matrix, through
// `pe inspect t5`) for any number of buckets, maximum distance and direction.
"use strict";
PeLive.figure("t5", {
  title: "T5's buckets",
  tryThis: "with 8 buckets the first 4 distances get a bucket each and the rest share 4 logarithmic ones; " +
           "tick bidirectional and the keys after the query get buckets of their own.",
  build(fig) {
    fig.slider("buckets", "buckets", {min: 2, max: 64, step: 2, value: 8});
    fig.slider("max_distance", "max distance", {min: 2, max: 256, value: 20});
    fig.checkbox("bidirectional", "bidirectional", false);
    fig.slider("positions", "positions", {min: 4, max: 48, value: 24});
    const canvas = fig.canvas(640, 560, "bucket of every query and key");
    async function draw() {
      const v = fig.values();
      const options = {buckets: String(v.buckets), max_distance: String(v.max_distance),
                       bidirectional: String(v.bidirectional)};
      const answer = await PeLive.call("inspect", {encoding: "t5", length: v.positions, options});
      if (answer.error) return fig.failed(answer.error);
      const buckets = answer.buckets.values, T = v.positions;
      PePlots.heatmap(canvas, {rows: T, cols: T, values: buckets, numbers: true, min: 0, max: v.buckets - 1,
                               title: "bucket(j - i)", xLabel: "key j", yLabel: "query i"});
      const used = new Set(buckets).size;
      fig.status(T + " positions use " + used + " of the " + v.buckets + " buckets; distances from " +
                 v.max_distance + " on share the last bucket of their side.");
      fig.result({options, length: T, buckets});
    }
    fig.onChange(draw);
    draw();
  },
});
