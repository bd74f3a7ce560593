// The subcommands of `pe`, one function each, so that pe.cpp reads as a table of contents.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace pe {

/// "key=value" pairs from repeated flags such as --option; `flag` names it in the error. Text
/// without a key, or a key given twice, throws pe::UsageError (exit status 2).
std::map<std::string, std::string> parse_pairs(const std::vector<std::string>& pairs,
                                               const char* flag);

void add_list_command(CLI::App& app);     ///< `pe list`: the encodings and tasks in this build
void add_train_command(CLI::App& app);    ///< `pe train`: one run into its folder
void add_eval_command(CLI::App& app);     ///< `pe eval`: a checkpoint's accuracy at given lengths
void add_heatmap_command(CLI::App& app);  ///< `pe heatmap`: a checkpoint's attention as a PNG
void add_inspect_command(CLI::App& app);  ///< `pe inspect`: an encoding's tables, printed
void add_table_command(CLI::App& app);    ///< `pe table`: every encoding on the reference tasks
/// `pe export`: a checkpoint as safetensors, with check logits (export.cpp)
void add_export_command(CLI::App& app);

}  // namespace pe
