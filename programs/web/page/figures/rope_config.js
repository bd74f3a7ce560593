// Chapter 11's live figure: a model's config.json (one of the chapter's examples, or any the
// reader pastes) read and explained by chapter 11's own read_hf_config_text and explain_hf_rope
// (programs/web/live_rope_config.cpp): for each kind of layer, the wavelength 2 pi / theta_i of
// every plane, scaled and unscaled, against the original context, coloured by what the rope
// type does to it, the divisor of each frequency, the attention factor, and which layers are of
// which kind. This file only draws; a config the chapter refuses shows its one-line error.
"use strict";
(function () {
  // Fast planes to slow ones, as Llama 3.1 orders them.
  const BANDS = [["kept", "#1f77b4"], ["blended", "#9467bd"], ["interpolated", "#d62728"],
                 ["rescaled", "#ff7f0e"], ["zero", "#999999"]];
  const BAND_COLOUR = Object.fromEntries(BANDS);
  const KIND_COLOURS = ["#1f77b4", "#2ca02c", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
  const NOPE_COLOUR = "#888888";
  const PASTED = "pasted";

  // The layers of a kind as runs: 0-4, 6-10, 12.
  function runs(layers) {
    const out = [];
    for (let k = 0; k < layers.length;) {
      let j = k;
      while (j + 1 < layers.length && layers[j + 1] === layers[j] + 1) j++;
      out.push(j === k ? String(layers[k]) : layers[k] + "-" + layers[j]);
      k = j + 1;
    }
    return out.length > 8 ? out.slice(0, 8).join(", ") + ", ..." : out.join(", ");
  }

  // The divisor of an interpolated plane: the factor, or for dynamic the scale at this length.
  function scaleInForce(kind) {
    return kind.scale !== undefined && kind.scale !== null ? kind.scale : kind.factor || 1;
  }

  // L0: the pretraining length (original_max_position_embeddings), or only the longest position.
  function contextName(kind) {
    return kind.context_from === "max_position_embeddings" ? "context (max_position_embeddings)" : "original context";
  }

  // What a kind of layer is, in one sentence.
  function describe(kind) {
    const parts = [kind.name + ": " + kind.count + (kind.count === 1 ? " layer (" : " layers (") + runs(kind.layers) + ")"];
    if (kind.window !== null && kind.window !== undefined) parts.push("sliding window " + kind.window);
    if (kind.chunk !== null && kind.chunk !== undefined) parts.push("chunks of " + kind.chunk);
    if (kind.temperature) parts.push("temperature 1 + " + kind.temperature.attn_scale + " log1p(floor((p + 1) / " +
                                     kind.temperature.floor_scale + "))");
    if (!kind.rotary) return parts.concat(["no rotation at all (NoPE)"]).join("; ") + ".";
    let rope = kind.rope_type + " rope, theta " + kind.rope_theta + ", head_dim " + kind.head_dim +
               ", " + kind.planes.length + " planes over " + kind.rotated_width + " coordinates";
    if (kind.factor !== null) rope += ", factor " + PePlots.format(kind.factor);
    if (scaleInForce(kind) !== (kind.factor || 1)) rope += ", scale in force " + PePlots.format(scaleInForce(kind));
    if (kind.original_context !== null) rope += ", " + contextName(kind) + " " + kind.original_context;
    if (kind.longrope_factors) rope += ", " + kind.longrope_factors + " in force";
    parts.push(rope);
    let factor = "attention factor " + PePlots.format(kind.attention_factor) + " (scores x " +
                 PePlots.format(kind.attention_factor * kind.attention_factor) + ")";
    if (kind.softmax_scale_factor !== undefined) factor += ", softmax scale x " + PePlots.format(kind.softmax_scale_factor);
    parts.push(factor);
    const counted = BANDS.filter(([b]) => kind.bands[b]).map(([b]) => kind.bands[b] + " " + b);
    return parts.join("; ") + ". Planes: " + counted.join(", ") + ".";
  }

  PeLive.figure("rope_config", {
    title: "a model's config.json: its RoPE frequencies, plane by plane, for each kind of layer",
    tryThis: "Llama 3.1 keeps its fast planes, divides its slow ones by 8 and blends those between; Gemma 3 rotates " +
             "its sliding layers with theta 10,000 and its global ones interpolated; Llama 4 Scout leaves every fourth " +
             "layer without rotation. Paste a config from any model's page, or edit one: set factor to 16, or delete " +
             "low_freq_factor to see the chapter's one-line error.",
    async build(fig) {
      const list = await PeLive.call("ropeConfigExamples");
      if (list.error) return fig.failed(list.error);
      const examples = Object.fromEntries(list.examples.map(e => [e.name, e.text]));
      const names = list.examples.map(e => e.name);
      const preferred = names.find(n => /llama-3\.1/.test(n)) || names[0] || PASTED;
      const choice = fig.select("example", "config",
                                names.map(n => [n, n.replace(/\.json$/, "")]).concat([[PASTED, "your own (pasted below)"]]),
                                preferred);
      fig.number("seq_len", "length of the pass (0: at initialisation; dynamic and longrope use it)",
                 {min: 0, max: 100000000, value: 0});
      const text = fig.textarea("config.json (paste any model's, or edit this one)", examples[choice.value] || "", 12);
      const pattern = fig.canvas(820, 96, "the model's layers, coloured by their kind");
      const kinds = fig.box("pe-live-kinds");

      // A text edited is the reader's own config (an example chosen fills the text: draw).
      text.onEdit(value => {
        if (choice.value !== PASTED && value !== examples[choice.value]) {
          choice.value = PASTED;
          fig.changed();  // records the choice in the address and redraws
        } else {
          draw();
        }
      });

      function drawKind(kind, index, box) {
        const note = document.createElement("p");
        note.className = "pe-live-note";
        note.textContent = describe(kind);
        box.appendChild(note);
        if (!kind.rotary) return;
        const row = document.createElement("div");
        row.className = "pe-live-row";
        box.appendChild(row);
        const planes = kind.planes, n = planes.length, x = planes.map(p => p.i);
        const waves = fig.canvas(480, 320, kind.name + ": the wavelength of each plane, scaled and unscaled, " +
                                 "against the original context", row);
        const divisors = fig.canvas(310, 320, kind.name + ": each plane's frequency divided by", row);
        const unscaled = planes.map(p => (p.default_inv_freq > 0 ? 2 * Math.PI / p.default_inv_freq : NaN));
        const series = [{name: "unscaled (rope_theta alone)", x, y: unscaled, dashed: true, colour: "#888"}];
        for (const [band, colour] of BANDS) {
          const inBand = planes.filter(p => p.band === band);
          if (!inBand.length) continue;
          series.push({name: band + ": " + inBand.length + (band === "zero" ? " (never turn)" : ""),
                       x: inBand.map(p => p.i), y: inBand.map(p => (p.wavelength === null ? NaN : p.wavelength)),
                       colour, dotsOnly: true});
        }
        const ends = [0, Math.max(1, n - 1)];
        if (kind.original_context !== null)
          series.push({name: contextName(kind) + " " + kind.original_context, x: ends,
                       y: [kind.original_context, kind.original_context], colour: "#222", width: 1});
        const v = fig.values();
        if (v.seq_len > 0) series.push({name: "the pass: " + v.seq_len, x: ends, y: [v.seq_len, v.seq_len],
                                        colour: "#2ca02c", dashed: true, width: 1});
        PePlots.lines(waves, {series, logY: true, xRange: ends, legend: "bottom", xLabel: "plane i",
                              yLabel: "wavelength 2 pi / theta_i (tokens)",
                              title: kind.name + ": wavelengths, attention factor " + PePlots.format(kind.attention_factor)});
        const ratio = planes.map(p => (p.inv_freq > 0 ? p.default_inv_freq / p.inv_freq : NaN));
        const scale = scaleInForce(kind), highest = Math.max(1, scale, ...ratio.filter(Number.isFinite));
        const named = scale === kind.factor ? "factor " : "scale in force ";
        PePlots.bars(divisors, {values: ratio, colours: planes.map(p => BAND_COLOUR[p.band]), yRange: [0, highest * 1.08],
                                line: scale > 1 ? {y: scale, label: named + PePlots.format(scale)} : null,
                                xLabel: "plane i", yLabel: "unscaled / scaled frequency",
                                title: "the divisor of each plane" + (kind.bands.zero ? " (" + kind.bands.zero +
                                       " zero planes: none)" : "")});
      }

      function drawPattern(answer) {
        const colourOf = answer.layer_types.map((kind, t) => (kind.rotary ? KIND_COLOURS[t % KIND_COLOURS.length] : NOPE_COLOUR));
        const letter = answer.layer_types.map(kind => (kind.name === "all" ? "" : kind.name[0].toUpperCase()));
        PePlots.strip(pattern, {
          colours: answer.pattern.map(t => (t >= 0 ? colourOf[t] : "#fff")),
          labels: answer.pattern.map(t => (t >= 0 ? letter[t] : "")),
          title: "the " + answer.layers + " layers, by kind",
          legend: answer.layer_types.map((kind, t) => [colourOf[t], kind.name + " (" + kind.count + ")" +
                                                       (kind.rotary ? "" : ": NoPE")])});
      }

      let latest = 0;
      async function draw() {
        const v = fig.values();
        if (v.example !== PASTED && text.value !== examples[v.example]) text.value = examples[v.example];
        const config = text.value;
        if (!config.trim()) return fig.failed("paste a config.json into the text area");
        const asked = ++latest;
        const source = v.example === PASTED ? "pasted config" : v.example;
        const answer = await PeLive.call("ropeConfig", {config, source, seq_len: v.seq_len});
        if (asked !== latest) return;  // a newer request is on its way
        kinds.replaceChildren();
        if (answer.error) {
          pattern.getContext("2d").clearRect(0, 0, pattern.width, pattern.height);
          return fig.failed(answer.error);
        }
        drawPattern(answer);
        answer.layer_types.forEach((kind, t) => drawKind(kind, t, kinds));
        const rotary = answer.layer_types.filter(k => k.rotary);
        fig.status(source + ": " + (answer.model_type || "no model_type") + ", " + answer.layers + " layers of " +
                   answer.layer_types.length + (answer.layer_types.length === 1 ? " kind" : " kinds") +
                   (rotary.length < answer.layer_types.length ? ", " + (answer.layer_types.length - rotary.length) +
                    " of them without rotation" : "") +
                   (v.seq_len > 0 ? "; for a pass over " + v.seq_len + " positions." : "; at initialisation."));
        fig.result(Object.assign({values: v}, answer));
      }
      fig.onChange(draw);
      draw();
    },
  });
})();
