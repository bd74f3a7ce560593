// The `pe` command: train, evaluate and look inside the encodings of this build.
//
//   pe list                               encodings and tasks in this build
//   pe train [options]                    one run; writes results/<name>/ (see run.hpp)
//   pe eval CHECKPOINT --lengths 32,64    accuracy of a trained model at given lengths
//   pe eval CHECKPOINT --window W [--sinks S] [--positions cache|original] [--characters N]
//                                         a charlm model's bits per character on a held-out
//                                         text read through chapter 12's window cache
//   pe heatmap CHECKPOINT --out FILE.png  attention of a trained model on a held-out sequence
//   pe inspect ENCODING                   an encoding's own quantities as JSON (see each chapter)
//   pe inspect rope --hf-config FILE      a model's config.json explained (chapter 11; --json)
//   pe table                              Part I's encodings on the reference tasks (--part)
//   pe generate CHECKPOINT --prompt TEXT --tokens N   text from a charlm model (generate.hpp);
//                                         --window W [--sinks S] [--positions cache|original]
//                                         decodes through chapter 12's window cache
//   pe export CHECKPOINT --out FILE.safetensors       the model for PyTorch, with check logits
#include <iostream>

#include "base/command_line.hpp"
#include "lab/chapter_registry.hpp"
#include "programs/pe/commands.hpp"
#include "programs/pe/generate.hpp"

int main(int argc, char** argv) {
  pe::register_chapter_encodings();
  CLI::App app{"pe: positional encodings, trained and inspected", "pe"};
  app.require_subcommand(1);
  pe::add_list_command(app);
  pe::add_train_command(app);
  pe::add_eval_command(app);
  pe::add_heatmap_command(app);
  pe::add_inspect_command(app);
  pe::add_table_command(app);
  pe::add_generate_command(app);
  pe::add_export_command(app);
  // CLI11 reads an unknown first word as a stray argument; say plainly what it is.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::string known;
    bool found = false;
    for (const auto* sub : app.get_subcommands({})) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      found = found || sub->get_name() == word;
    }
    if (!found) {
      std::cerr << "pe: unknown command '" << word << "' (expected one of: " << known << ")\n";
      return 2;
    }
  }
  try {
    if (const auto status = pe::parse_command_line(app, argc, argv)) return *status;
  } catch (const std::exception& e) {  // thrown by a command: a bad file, encoding, task, ...
    std::cerr << "pe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
