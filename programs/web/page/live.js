// The live pages' runtime, shared by every figure of a page:
//   - the page's one Web Worker, which runs the book's module (module.js holds its source and
//     the worker's, so that a page opened from file:// can start it from a Blob);
//   - a figure's frame: its title, the line that says what to try, labelled controls whose
//     values the page's address records (#figure.key=value&...), its status line, and the
//     result it drew, kept on the element (data-result) for the browser check;
//   - the start of every figure of the page (figures/NAME.js registers it with PeLive.figure).
"use strict";
(function () {
  if (window.PeLive) return;

  // ---- the worker ----------------------------------------------------------------------------

  let worker = null;
  let nextId = 1;
  const listeners = new Map();  // message id -> function(message)
  const noteListeners = [];

  function available() {
    return typeof window.peLiveModuleSource === "string";
  }

  function startWorker() {
    const source = window.peLiveModuleSource + "\n" + window.peLiveWorkerSource;
    const w = new Worker(URL.createObjectURL(new Blob([source], {type: "text/javascript"})));
    w.onmessage = event => {
      const message = event.data;
      if (message.type === "note") {
        noteListeners.forEach(f => f(message.text));
        return;
      }
      const listener = listeners.get(message.id);
      if (listener) listener(message);
    };
    w.onerror = event => {
      event.preventDefault();
      const text = JSON.stringify({error: "the module stopped: " + (event.message || "unknown error")});
      for (const [id, listener] of listeners) listener({type: "answer", id, text});
      listeners.clear();
      worker = null;
    };
    return w;
  }

  function send(message, listener) {
    worker = worker || startWorker();
    const id = nextId++;
    listeners.set(id, listener);
    worker.postMessage(Object.assign({id}, message));
    return id;
  }

  function ask(message) {
    return new Promise(resolve =>
      send(message, answer => {
        listeners.delete(answer.id);
        resolve(JSON.parse(answer.text));
      }));
  }

  /// One function of programs/web/bindings.cpp (inspect, permutation, rope, build) on a request
  /// object; resolves to its answer ({error: "..."} when the C++ refused the request).
  function call(name, request) {
    return ask({type: "call", name, request: JSON.stringify(request || {})});
  }

  /// The model trained last on this page: evaluateLengths(request object), inspect(length),
  /// attention(length).
  function model(name, request) {
    return ask({type: "model", name, request: typeof request === "object" ? JSON.stringify(request) : String(request)});
  }

  /// Trains a TrainConfig (an object, as in run.json's "config") in slices of `slice` steps.
  /// handlers: progress(state), attention(panels) after every slice when `attention` (a
  /// length) is given, done(state). Returns a function that stops the run after its slice.
  function train(config, options, handlers) {
    const id = send({type: "train", config: JSON.stringify(config), slice: options.slice,
                     attention: options.attention || 0}, message => {
      const data = JSON.parse(message.text);
      if (message.type === "progress") handlers.progress(data);
      else if (message.type === "attention") handlers.attention(data);
      else if (message.type === "trained" || message.type === "answer") {
        listeners.delete(message.id);
        handlers.done(data);
      }
    });
    return () => worker && worker.postMessage({type: "stop", id});
  }

  // ---- the address: #figure.key=value&... --------------------------------------------------------

  // A hash without "=" is a link to a section of the page, not a figure's controls.
  function addressValues() {
    const hash = location.hash.slice(1);
    return hash.includes("=") ? new URLSearchParams(hash) : new URLSearchParams();
  }

  function recordInAddress(figure, values) {
    const params = addressValues();
    for (const key of Array.from(params.keys())) if (key.startsWith(figure + ".")) params.delete(key);
    for (const [key, value] of Object.entries(values)) params.set(figure + "." + key, String(value));
    history.replaceState(null, "", "#" + params.toString());
  }

  // ---- a figure's frame and controls --------------------------------------------------------------

  function element(tag, attributes, parent) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) {
      if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    if (parent) parent.appendChild(e);
    return e;
  }

  class Figure {
    constructor(root, name, spec) {
      this.root = root;
      this.name = name;
      this.inputs = {};
      this.changeHandlers = [];
      element("div", {class: "pe-live-title", text: "Live figure: " + spec.title}, root);
      element("p", {class: "pe-live-try", text: "Try: " + spec.tryThis}, root);
      this.controlsBox = element("div", {class: "pe-live-controls"}, root);
      this.body = element("div", {class: "pe-live-body"}, root);
      this.statusLine = element("p", {class: "pe-live-status", role: "status", "aria-live": "polite"}, root);
      this.saved = addressValues();
    }

    // The value the address gives for a control, or its default.
    initial(key, fallback) {
      const v = this.saved.get(this.name + "." + key);
      return v === null ? fallback : v;
    }

    labelled(key, label, input) {
      const id = "pe-" + this.name + "-" + key;
      const box = element("span", {class: "pe-live-control"}, this.controlsBox);
      element("label", {for: id, text: label}, box);
      input.id = id;
      input.name = key;
      box.appendChild(input);
      this.inputs[key] = input;
      return box;
    }

    /// A slider with its value beside it (keyboard: arrow keys, Page Up/Down, Home, End).
    slider(key, label, options) {
      const input = element("input", {type: "range", min: options.min, max: options.max, step: options.step || 1});
      input.value = this.initial(key, options.value);
      const box = this.labelled(key, label, input);
      const shown = element("output", {for: input.id, text: input.value}, box);
      input.addEventListener("input", () => { shown.textContent = input.value; this.changed(); });
      return input;
    }

    /// A drop-down list; choices: [[value, text], ...].
    select(key, label, choices, value) {
      const input = element("select", {});
      for (const [v, text] of choices) element("option", {value: v, text}, input);
      input.value = this.initial(key, value);
      if (input.selectedIndex < 0) input.value = value;
      this.labelled(key, label, input);
      input.addEventListener("change", () => this.changed());
      return input;
    }

    /// A number field (checked against min and max before use).
    number(key, label, options) {
      const input = element("input", {type: "number", min: options.min, max: options.max, step: options.step || 1});
      input.value = this.initial(key, options.value);
      this.labelled(key, label, input);
      input.addEventListener("change", () => this.changed());
      return input;
    }

    /// A text field.
    text(key, label, value, size) {
      const input = element("input", {type: "text", size: size || 24});
      input.value = this.initial(key, value);
      this.labelled(key, label, input);
      input.addEventListener("change", () => this.changed());
      return input;
    }

    /// A text area for a long text (a whole config.json, say), across the controls; one per
    /// figure (its id is pe-NAME-textarea). The address does not keep it: the figure reads it
    /// itself and reacts to onEdit(f), which calls f after the reader stops typing for `pause`
    /// ms (and at once on a paste).
    textarea(label, value, rows, pause) {
      const id = "pe-" + this.name + "-textarea";
      const box = element("span", {class: "pe-live-control pe-live-wide"}, this.controlsBox);
      element("label", {for: id, text: label}, box);
      const input = element("textarea", {id, rows: rows || 10, spellcheck: "false"}, box);
      input.value = value || "";
      let timer = null;
      const handlers = [];
      const fire = delay => {
        clearTimeout(timer);
        timer = setTimeout(() => handlers.forEach(f => f(input.value)), delay);
      };
      input.addEventListener("input", () => fire(pause === undefined ? 400 : pause));
      input.addEventListener("paste", () => fire(0));
      input.onEdit = f => handlers.push(f);
      return input;
    }

    /// A check box.
    checkbox(key, label, value) {
      const input = element("input", {type: "checkbox"});
      const saved = this.initial(key, null);
      input.checked = saved === null ? value : saved === "true";
      this.labelled(key, label, input);
      input.addEventListener("change", () => this.changed());
      return input;
    }

    button(label, onClick) {
      const b = element("button", {type: "button", class: "pe-live-button", text: label}, this.controlsBox);
      b.addEventListener("click", onClick);
      return b;
    }

    /// The controls' values by key (numbers as numbers, check boxes as booleans).
    values() {
      const out = {};
      for (const [key, input] of Object.entries(this.inputs)) {
        if (input.type === "checkbox") out[key] = input.checked;
        else if (input.type === "range" || input.type === "number") out[key] = Number(input.value);
        else out[key] = input.value;
      }
      return out;
    }

    /// Calls f after any control changes (and records the controls in the address).
    onChange(f) {
      this.changeHandlers.push(f);
    }

    changed() {
      recordInAddress(this.name, this.values());
      this.changeHandlers.forEach(f => f());
    }

    /// A canvas of the given CSS size with a text alternative, in the figure's body (or box).
    canvas(width, height, label, box) {
      const c = element("canvas", {role: "img", "aria-label": label, style: "width:" + width + "px;height:" + height + "px"},
                        box || this.body);
      return c;
    }

    box(className) {
      return element("div", {class: className || "pe-live-row"}, this.body);
    }

    status(text) {
      this.statusLine.textContent = text;
    }

    /// What the figure drew, for the browser check (programs/web/live_check.py reads data-result).
    result(value) {
      this.root.dataset.result = JSON.stringify(value);
      this.root.dataset.state = "drawn";
    }

    /// The C++ refused: its one-line message in place of the figure.
    failed(message) {
      this.status("Cannot draw this: " + message);
      this.root.dataset.state = "error";
    }
  }

  // ---- the figures of the page --------------------------------------------------------------------

  const builders = {};

  /// Registers a figure: spec {title, tryThis (one line), build(figure)}; build adds the
  /// controls and draws.
  function figure(name, spec) {
    builders[name] = spec;
  }

  function startFigures() {
    for (const root of document.querySelectorAll(".pe-live[data-figure]")) {
      const name = root.dataset.figure, spec = builders[name];
      if (!spec || root.dataset.started) continue;
      root.dataset.started = "yes";
      const fig = new Figure(root, name, spec);
      if (!available()) {
        fig.status("This live figure runs the book's C++ compiled to WebAssembly, which this " +
                   "copy of the book was built without: build it (emcmake cmake --preset wasm && " +
                   "cmake --build --preset wasm), then the docs target again.");
        root.dataset.state = "no-module";
        continue;
      }
      spec.build(fig);
    }
  }

  function onNote(f) {
    noteListeners.push(f);
  }

  window.PeLive = {call, model, train, figure, onNote, available};
  document.addEventListener("DOMContentLoaded", startFigures);
})();
