// The live pages' Web Worker: it starts the book's module (createPeLive, which module.js
// places before this text in the worker's source) and answers the page's messages, so that
// the page stays responsive while the C++ computes. Messages, each with the page's id:
//   {type: "call", name, request}   a function of programs/web/bindings.cpp -> {type: "answer", text}
//   {type: "train", config, slice, attention}
//                                   a training run, `slice` steps at a time -> after each
//                                   slice {type: "progress", text}, with `attention` (a
//                                   length) also {type: "attention", text}; at the end
//                                   {type: "trained", text}
//   {type: "stop"}                  ends the run after its current slice
//   {type: "model", name, request}  evaluateLengths, stream (JSON requests), inspect or attention
//                                   (a length) of the model just trained -> {type: "answer", text}
// Every text is JSON from the C++ side; a request it refused holds {"error": ...}.
"use strict";

let modulePromise = null;
let training = null;  // the run being trained, or the last one (kept for "model" messages)
let stopRequested = false;

function peModule() {
  // The module's prints go to the page as notes, not to the console.
  modulePromise = modulePromise || createPeLive({
    print: text => self.postMessage({type: "note", text}),
    printErr: text => self.postMessage({type: "note", text}),
  });
  return modulePromise;
}

// Lets the worker read its next message (a stop) between two slices.
function yieldToMessages() {
  return new Promise(resolve => setTimeout(resolve, 0));
}

async function train(m, message) {
  if (training) training.delete();
  training = new m.Training(message.config);
  const refused = training.error();
  if (refused) {
    self.postMessage({type: "trained", id: message.id, text: refused});
    return;
  }
  stopRequested = false;
  let last = "{}";
  for (;;) {
    last = training.advance(message.slice);
    self.postMessage({type: "progress", id: message.id, text: last});
    if (message.attention)
      self.postMessage({type: "attention", id: message.id, text: training.attention(message.attention)});
    const state = JSON.parse(last);
    if (state.error || state.done) break;
    await yieldToMessages();
    if (stopRequested) break;
  }
  self.postMessage({type: "trained", id: message.id, text: last});
}

async function answer(message) {
  const m = await peModule();
  if (message.type === "call") {
    self.postMessage({type: "answer", id: message.id, text: m[message.name](message.request)});
  } else if (message.type === "train") {
    await train(m, message);
  } else if (message.type === "model") {
    const text = !training ? JSON.stringify({error: "train a model first"})
               : ["evaluateLengths", "stream"].includes(message.name) ? training[message.name](message.request)
               : training[message.name](Number(message.request));
    self.postMessage({type: "answer", id: message.id, text});
  }
};

self.onmessage = event => {
  const message = event.data;
  if (message.type === "stop") {
    stopRequested = true;
    return;
  }
  // A failure outside the C++ checks (the module could not start, say) still answers, so that
  // the figure says what happened instead of waiting.
  answer(message).catch(error => {
    self.postMessage({type: message.type === "train" ? "trained" : "answer", id: message.id,
                      text: JSON.stringify({error: String(error && error.message || error)})});
  });
};
