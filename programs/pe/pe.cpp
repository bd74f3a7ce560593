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
#include <string>

#include "base/command_line.hpp"
#include "base/program_frame.hpp"
#include "lab/chapter_registry.hpp"
#include "programs/pe/commands.hpp"
#include "programs/pe/generate.hpp"

namespace {

// What `pe --help` ends with: the exit statuses (base/program_frame.hpp; README.md says the
// same).
constexpr const char* kExitStatuses =
    "Exit status: 0 done; 1 the work failed (a damaged or unreadable file, a full disk or "
    "standard output that cannot be written, memory, training diverging, an output folder that "
    "holds another run or that another process is writing); 2 the command line is wrong (an "
    "unknown or repeated option, a bad value, a file named on it that does not exist, an output "
    "that is a pipe, a device or a link, an unknown encoding, task or option name, a "
    "configuration that cannot be trained as given).";

// What the command named on the command line was doing, for a std::bad_alloc's message.
std::string doing(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  if (parsed.empty()) return "reading the command line";
  const std::string name = parsed.front()->get_name();
  const std::string what = name == "train"      ? "training"
                           : name == "eval"     ? "evaluating the model"
                           : name == "heatmap"  ? "drawing the attention"
                           : name == "inspect"  ? "computing the encoding's quantities"
                           : name == "table"    ? "training the table's runs"
                           : name == "generate" ? "generating text"
                           : name == "export"   ? "exporting the model"
                                                : "running";
  return what + " (pe " + name + ")";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pe: positional encodings, trained and inspected", "pe"};
  app.footer(kExitStatuses);
  return pe::run_program(
      "pe",
      [&] {
        pe::register_chapter_encodings();
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
          if (!found)
            throw pe::UsageError("unknown command '" + word + "' (expected one of: " + known + ")");
        }
        // A command's own mistakes (a bad file, encoding, task, ...) are thrown to the frame.
        return pe::parse_command_line(app, argc, argv).value_or(pe::kExitDone);
      },
      [&] { return doing(app); },
      "give a shorter --length, a smaller --batch or --width, or set PE_MEMORY_LIMIT_BYTES to "
      "the bytes this machine can spare, so that pe refuses such work before it starts");
}
