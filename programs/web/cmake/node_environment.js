// Linked before every program of the wasm build (programs/web/cmake/Wasm.cmake). Under node, the
// process's environment becomes the program's, as it is natively: ctest sets PE_SIMD for the
// kernel tests. In a browser there is no process and nothing changes.
Module["preRun"] = [].concat(Module["preRun"] || [], function () {
  if (typeof process === "object" && process.env) Object.assign(ENV, process.env);
});
