// The native twin of chapter 12's live figure, for programs/web/live_check.py: the stream
// losses of a model saved by `pe train`, computed by the same C++ as the page's
// (live_stream.cpp), so that the check can compare the browser's numbers with the native
// build's.
//
//   live_stream_native CHECKPOINT REQUEST_JSON   (prints stream_losses' answer as JSON)
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/program_frame.hpp"
#include "lab/chapter_registry.hpp"
#include "programs/web/live_stream.hpp"

// The program itself; main runs it in the book's frame (base/program_frame.hpp).
static int program_main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: live_stream_native CHECKPOINT REQUEST_JSON\n";
    return 2;
  }
  pe::register_chapter_encodings();  // every encoding of chapters 2-12, as the module has
  try {
    auto trainer = pe::Trainer::resume(argv[1]);
    std::cout << pe::live::stream_losses(*trainer, nlohmann::json::parse(argv[2])).dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "live_stream_native: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return pe::run_program(
      "live_stream_native", [&] { return program_main(argc, argv); }, "streaming the model");
}
