// results: keeps the numbers the book quotes equal to the runs that produced them.
//
// Every chapter's experiment writes a summary (lab/summary.hpp), committed beside the
// chapter as results/summary.json. The text marks what it quotes from it in two ways.
//
// A block, either a fenced code block right after the marker or, for a markdown table, the
// lines up to an end marker:
//
//   <!-- results: results/summary.json#output -->
//   ```text
//   ...the lines of summary["output"]...
//   ```
//
//   <!-- results: ../../lab/results/table.json#table?rows=rope -->
//   | encoding | task | ... |
//   |---|---|...
//   | rope | shiftk | ... |
//   <!-- /results -->
//
// The path is relative to the markdown file; the key after `#` walks the JSON by object keys
// and array indices separated by dots and must lead to a string or an array of strings (the
// lines). Options after `?`, joined by `&`: `rows=a,b` keeps a table's two header lines and
// the rows whose first cell is a or b; `lines=3-10` keeps those lines (1-based, inclusive).
//
// A number in the prose, followed at once by a comment that names its value:
//
//   a query puts 0.64<!-- value: runs.shiftk.by_offset.0.0.4 --> of its weight ...
//   ShiftK reaches 99.6%<!-- value: ../07-nope/results/summary.json#runs.shiftk-l8.accuracy -->
//
// The number must equal the value rounded to the decimals written, within half a unit of its
// last digit (a `%` right after the number means the value is a fraction, shown times 100). Without a path the value comes from
// results/summary.json beside the markdown file.
//
//   results check  <markdown files...>        report every quote that differs
//   results update <markdown files...>        rewrite the quotes from the summaries
//   results import-table <table.md> <table.json> <out.json>
//                                             the summary of a `pe table` run, for the text
//   results selftest <testdata-dir> <scratch-dir>   the checker's own test (see below)
//
// Exit status: 0 when every quote matches (or was updated), 1 when some quote is wrong or
// cannot be resolved, 2 on a usage error.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Lines = std::vector<std::string>;

struct Problem {
  std::string file;
  int line;
  std::string reason;
};

std::optional<Lines> read_lines(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  Lines lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, by)) parts.push_back(part);
  return parts;
}

// The summaries read so far, by path; a file that cannot be read is remembered with its error.
struct Summaries {
  std::map<std::string, json> files;
  std::map<std::string, std::string> errors;

  const json* get(const fs::path& path, std::string& error) {
    const std::string key = path.lexically_normal().string();
    if (auto it = errors.find(key); it != errors.end()) {
      error = it->second;
      return nullptr;
    }
    if (auto it = files.find(key); it != files.end()) return &it->second;
    std::ifstream in(key);
    if (!in) {
      error = errors[key] = "cannot open the summary " + key;
      return nullptr;
    }
    try {
      return &(files[key] = json::parse(in));
    } catch (const json::exception& e) {
      error = errors[key] = "the summary " + key + " is not valid JSON (" + e.what() + ")";
      return nullptr;
    }
  }
};

// summary[key] for a dotted key ("runs.shiftk.by_offset.0.0.4"), or the reason there is none.
const json* walk(const json& summary, const std::string& key, std::string& error) {
  const json* at = &summary;
  std::string done;
  for (const std::string& part : split(key, '.')) {
    if (at->is_object() && at->contains(part)) {
      at = &(*at)[part];
    } else if (at->is_array() && !part.empty() &&
               part.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(part) < at->size()) {
      at = &(*at)[std::stoul(part)];
    } else {
      error = "the summary has no '" + part + "'" + (done.empty() ? "" : " in '" + done + "'");
      return nullptr;
    }
    done += (done.empty() ? "" : ".") + part;
  }
  return at;
}

// A target "path#key?options", resolved against the markdown file's folder.
struct Target {
  fs::path file;
  std::string key;
  std::map<std::string, std::string> options;
};

std::optional<Target> parse_target(const std::string& text, const fs::path& folder,
                                   const std::string& default_file, std::string& error) {
  std::string rest = text;
  Target target;
  if (const auto q = rest.find('?'); q != std::string::npos) {
    for (const std::string& option : split(rest.substr(q + 1), '&')) {
      const auto eq = option.find('=');
      if (eq == std::string::npos) {
        error = "option '" + option + "' is not name=value";
        return std::nullopt;
      }
      target.options[option.substr(0, eq)] = option.substr(eq + 1);
    }
    rest = rest.substr(0, q);
  }
  const auto hash = rest.find('#');
  std::string file = hash == std::string::npos ? default_file : rest.substr(0, hash);
  target.key = hash == std::string::npos ? rest : rest.substr(hash + 1);
  if (file.empty() || target.key.empty()) {
    error = "expected path/to/summary.json#key, got '" + text + "'";
    return std::nullopt;
  }
  target.file = folder / file;
  return target;
}

// The lines a block marker asks for, or the reason there are none.
std::optional<Lines> block_lines(const Target& target, Summaries& summaries, std::string& error) {
  const json* summary = summaries.get(target.file, error);
  if (!summary) return std::nullopt;
  const json* value = walk(*summary, target.key, error);
  if (!value) return std::nullopt;
  Lines lines;
  if (value->is_string()) {
    lines = split(value->get<std::string>(), '\n');
  } else if (value->is_array()) {
    for (const json& line : *value) {
      if (!line.is_string()) {
        error = "'" + target.key + "' is not a list of lines";
        return std::nullopt;
      }
      lines.push_back(line.get<std::string>());
    }
  } else {
    error = "'" + target.key + "' is neither text nor a list of lines";
    return std::nullopt;
  }
  for (const auto& [name, option] : target.options) {
    if (name == "rows") {  // a markdown table: the header, the rule, and the named rows
      const auto wanted = split(option, ',');
      const std::set<std::string> names(wanted.begin(), wanted.end());
      Lines kept;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto cells = split(lines[i], '|');
        if (i < 2 || (cells.size() > 1 && names.count(trim(cells[1])))) kept.push_back(lines[i]);
      }
      if (kept.size() <= 2) {
        error = "no row of '" + target.key + "' starts with " + option;
        return std::nullopt;
      }
      lines = kept;
    } else if (name == "lines") {
      const auto range = split(option, '-');
      std::size_t first = 0, last = 0;
      try {
        if (range.size() == 2) first = std::stoul(range[0]), last = std::stoul(range[1]);
      } catch (const std::exception&) {
      }
      if (first < 1 || last < first || last > lines.size()) {
        error = "lines=" + option + " is not a range within the " +
                std::to_string(lines.size()) + " lines of '" + target.key + "'";
        return std::nullopt;
      }
      lines = Lines(lines.begin() + long(first) - 1, lines.begin() + long(last));
    } else {
      error = "unknown option '" + name + "' (known: rows, lines)";
      return std::nullopt;
    }
  }
  return lines;
}

std::string format_number(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string s = text;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // -0.00
  return s;
}

const std::regex& block_marker() {
  static const std::regex re(R"(^\s*<!--\s*results:\s*(\S+)\s*-->\s*$)");
  return re;
}
const std::regex& block_end() {
  static const std::regex re(R"(^\s*<!--\s*/results\s*-->\s*$)");
  return re;
}
const std::regex& inline_value() {
  static const std::regex re(R"((-?[0-9]+(?:\.[0-9]+)?)(%?)<!--\s*value:\s*(\S+)\s*-->)");
  return re;
}

constexpr const char* kDefaultSummary = "results/summary.json";

// Checks (and, with `update`, rewrites) the quotes of one markdown file; returns how many.
int process(const std::string& md_name, bool update, Summaries& summaries,
            std::vector<Problem>& problems, std::ostream& log) {
  const auto md = read_lines(md_name);
  if (!md) {
    problems.push_back({md_name, 0, "cannot open the markdown file"});
    return 0;
  }
  const fs::path folder = fs::path(md_name).parent_path();
  Lines out;
  int count = 0;
  bool changed = false;
  std::string fence;  // the fence of a code block we are in that is not a quote
  for (std::size_t i = 0; i < md->size(); ++i) {
    const std::string& line = (*md)[i];
    const std::string text = trim(line);
    if (!fence.empty()) {
      if (text == fence) fence.clear();
      out.push_back(line);
      continue;
    }
    if (text.rfind("```", 0) == 0) {  // a code block that may show the syntax itself
      fence = text.substr(0, text.find_first_not_of('`'));
      out.push_back(line);
      continue;
    }
    const int at = int(i) + 1;
    std::smatch match;
    if (std::regex_match(line, match, block_marker())) {
      ++count;
      out.push_back(line);
      // The quoted lines: a fenced block right after the marker, or up to <!-- /results -->.
      std::size_t first = i + 1, end = first;  // quoted lines are [first, end)
      std::size_t resume;                      // the next line to copy after the block
      const bool fenced = first < md->size() && trim((*md)[first]).rfind("```", 0) == 0;
      if (fenced) {
        const std::string open = trim((*md)[first]);
        const std::string close = open.substr(0, open.find_first_not_of('`'));
        ++first;
        end = first;
        while (end < md->size() && trim((*md)[end]) != close) ++end;
        resume = end;
      } else {
        while (end < md->size() && !std::regex_match((*md)[end], block_end())) ++end;
        resume = end;
      }
      if (end >= md->size()) {
        problems.push_back({md_name, at, fenced ? "the code block after the marker is never closed"
                                                : "no <!-- /results --> after the marker"});
        for (std::size_t k = i + 1; k < md->size(); ++k) out.push_back((*md)[k]);
        i = md->size();
        break;
      }
      if (fenced) out.push_back((*md)[i + 1]);
      const Lines quoted(md->begin() + long(first), md->begin() + long(end));
      std::string error;
      std::optional<Lines> expected;
      if (auto target = parse_target(match[1], folder, kDefaultSummary, error))
        expected = block_lines(*target, summaries, error);
      if (!expected) {
        problems.push_back({md_name, at, error});
        out.insert(out.end(), quoted.begin(), quoted.end());
      } else if (quoted == *expected) {
        out.insert(out.end(), quoted.begin(), quoted.end());
      } else if (update) {
        out.insert(out.end(), expected->begin(), expected->end());
        changed = true;
        log << md_name << ":" << at << ": updated " << match[1] << "\n";
      } else {
        std::size_t k = 0;
        while (k < quoted.size() && k < expected->size() && quoted[k] == (*expected)[k]) ++k;
        std::ostringstream reason;
        reason << "block " << match[1] << " differs from its summary at line " << k + 1
               << " of the block";
        if (k < quoted.size()) reason << ": text '" << quoted[k] << "'";
        if (k < expected->size()) reason << ", summary '" << (*expected)[k] << "'";
        reason << "; run `results update` or fix the summary";
        problems.push_back({md_name, at, reason.str()});
        out.insert(out.end(), quoted.begin(), quoted.end());
      }
      out.push_back((*md)[resume]);  // the closing fence or the end marker
      i = resume;
      continue;
    }
    // Inline values.
    std::string rewritten;
    std::size_t copied = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), inline_value());
         it != std::sregex_iterator(); ++it) {
      ++count;
      const std::smatch& m = *it;
      const std::string written = m[1];
      const bool percent = m[2].length() > 0;
      const auto dot = written.find('.');
      const int decimals = dot == std::string::npos ? 0 : int(written.size() - dot - 1);
      rewritten += line.substr(copied, std::size_t(m.position(0)) - copied);
      copied = std::size_t(m.position(0) + m.length(0));
      std::string error, expected;
      const json* value = nullptr;
      if (auto target = parse_target(m[3], folder, kDefaultSummary, error)) {
        if (!target->options.empty())
          error = "a value takes no options";
        else if (const json* summary = summaries.get(target->file, error))
          value = walk(*summary, target->key, error);
      }
      if (value && !value->is_number()) {
        error = "'" + std::string(m[3]) + "' is not a number";
        value = nullptr;
      }
      // Equal when the value rounds to the number written; a value half-way between two
      // roundings (0.205 printed by the experiment as 0.205, quoted as 0.21) may go either way.
      bool equal = false;
      if (value) {
        const double shown = value->get<double>() * (percent ? 100.0 : 1.0);
        expected = format_number(shown, decimals);
        equal = expected == written ||
                std::fabs(shown - std::stod(written)) <= 0.5 * std::pow(10.0, -decimals) + 1e-9;
      }
      if (!value) {
        problems.push_back({md_name, at, error});
      } else if (!equal) {
        if (update) {
          changed = true;
          log << md_name << ":" << at << ": updated " << written << " to " << expected << " ("
              << m[3] << ")\n";
        } else {
          problems.push_back({md_name, at, "the text says " + written + (percent ? "%" : "") +
                                               ", the summary " + expected + (percent ? "%" : "") +
                                               " (" + std::string(m[3]) +
                                               "); run `results update` or fix the summary"});
        }
      }
      rewritten += (value && update && !equal ? expected : written) + std::string(m[2]) +
                   m.str(0).substr(std::size_t(m.length(1) + m.length(2)));
    }
    rewritten += line.substr(copied);
    out.push_back(rewritten);
  }
  if (changed) {
    std::ofstream file(md_name);
    for (const auto& l : out) file << l << "\n";
    if (!file) problems.push_back({md_name, 0, "could not write the updated file"});
  }
  return count;
}

int run(const std::string& mode, const std::vector<std::string>& files, std::ostream& log,
        std::ostream& errors) {
  std::vector<Problem> problems;
  Summaries summaries;
  int count = 0;
  for (const auto& file : files) count += process(file, mode == "update", summaries, problems, log);
  for (const auto& p : problems) errors << p.file << ":" << p.line << ": " << p.reason << "\n";
  log << "results " << mode << ": " << count << " quotes in " << files.size() << " files, "
      << problems.size() << " problems\n";
  return problems.empty() ? 0 : 1;
}

// The summary of a `pe table` run: its markdown table as lines, and its rows and versions.
int import_table(const std::string& md_path, const std::string& json_path,
                 const std::string& out_path) {
  const auto table = read_lines(md_path);
  std::ifstream in(json_path);
  if (!table || !in) {
    std::cerr << "results: cannot read " << (table ? json_path : md_path) << "\n";
    return 1;
  }
  const json rows = json::parse(in);
  json summary = {{"experiment", "pe table"}, {"table", *table}};
  for (const char* field : {"versions", "rows"})
    if (rows.contains(field)) summary[field] = rows[field];
  std::ofstream out(out_path);
  out << summary.dump(1) << "\n";
  if (!out) {
    std::cerr << "results: cannot write " << out_path << "\n";
    return 1;
  }
  std::cout << "wrote " << out_path << "\n";
  return 0;
}

// The checker's own test. bad.md marks each quote that must fail with a line
// `<!-- expect-error: words -->` just before it (for inline values: just before the line that
// holds them): check must report exactly those lines, each with a reason containing the words.
// good.md must pass as it is; a copy of it with one digit of a block and one digit of an
// inline value edited must fail twice; update must repair the copy.
int selftest(const fs::path& data, const fs::path& scratch) {
  int failures = 0;
  auto fail = [&](const std::string& what) {
    std::cerr << "selftest: " << what << "\n";
    ++failures;
  };
  std::ostringstream quiet;
  const fs::path good = data / "good.md";
  if (run("check", {good.string()}, quiet, quiet) != 0) fail("good.md should pass:\n" + quiet.str());

  auto reported = [&](const fs::path& file, bool update) {
    std::vector<Problem> problems;
    std::ostringstream sink;
    Summaries summaries;
    process(file.string(), update, summaries, problems, sink);
    std::map<int, std::string> lines;
    for (const auto& p : problems) lines[p.line] += p.reason + "; ";
    return lines;
  };

  // bad.md: exactly the expected lines, for the expected reasons.
  const fs::path bad = data / "bad.md";
  std::map<int, std::string> expected;
  const std::regex expect(R"(^\s*<!--\s*expect-error:\s*(.*?)\s*-->\s*$)");
  const auto bad_lines = read_lines(bad);
  if (!bad_lines) fail("cannot read " + bad.string());
  for (std::size_t i = 0; bad_lines && i + 1 < bad_lines->size(); ++i) {
    std::smatch match;
    if (std::regex_match((*bad_lines)[i], match, expect)) expected[int(i) + 2] = match[1];
  }
  if (expected.empty()) fail("bad.md has no expect-error lines");
  const auto found = reported(bad, false);
  for (const auto& [line, words] : expected) {
    auto it = found.find(line);
    if (it == found.end())
      fail("bad.md:" + std::to_string(line) + " should be reported (" + words + ")");
    else if (it->second.find(words) == std::string::npos)
      fail("bad.md:" + std::to_string(line) + " reason '" + it->second + "' lacks '" + words + "'");
  }
  for (const auto& [line, reason] : found)
    if (!expected.count(line))
      fail("bad.md:" + std::to_string(line) + " reported but should pass: " + reason);

  // A number edited by hand in a copy of good.md: once in a block, once inline.
  fs::create_directories(scratch / "results");
  fs::copy_file(data / "results" / "summary.json", scratch / "results" / "summary.json",
                fs::copy_options::overwrite_existing);
  const fs::path copy = scratch / "good.md";
  auto lines = read_lines(good);
  if (!lines) return fail("cannot read good.md"), 1;
  int edits = 0;
  for (std::string& line : *lines) {
    if (edits == 0 && line.find("accuracy 1.0000") != std::string::npos)
      line.replace(line.find("accuracy 1.0000"), 15, "accuracy 0.9999"), ++edits;
    else if (edits == 1 && line.find("0.64<!--") != std::string::npos)
      line.replace(line.find("0.64<!--"), 4, "0.65"), ++edits;
  }
  if (edits != 2) fail("good.md lacks the two numbers the selftest edits");
  {
    std::ofstream out(copy);
    for (const auto& l : *lines) out << l << "\n";
  }
  if (reported(copy, false).size() != 2) fail("the two hand-edited numbers must both be reported");
  reported(copy, true);
  if (!reported(copy, false).empty()) fail("update did not repair the hand-edited numbers");
  if (read_lines(copy) != read_lines(good)) fail("update did not restore good.md exactly");

  std::cout << "results selftest: " << expected.size() << " expected failures, " << failures
            << " selftest failures\n";
  return failures == 0 ? 0 : 1;
}

int usage() {
  std::cerr << "usage: results check <markdown files...>\n"
               "       results update <markdown files...>\n"
               "       results import-table <table.md> <table.json> <out.json>\n"
               "       results selftest <testdata-dir> <scratch-dir>\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  try {
    if (mode == "selftest") return rest.size() == 2 ? selftest(rest[0], rest[1]) : usage();
    if (mode == "import-table")
      return rest.size() == 3 ? import_table(rest[0], rest[1], rest[2]) : usage();
    if (mode != "check" && mode != "update") {
      std::cerr << "results: unknown mode '" << mode << "'\n";
      return usage();
    }
    return run(mode, rest, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "results: " << e.what() << "\n";
    return 2;
  }
}
