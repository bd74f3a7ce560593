// snippets: keeps the book's text in sync with its code.
//
// A chapter quotes source code like this:
//
//   <!-- snippet: ag/src/engine.cpp#backward-loop -->
//   ```cpp
//   ...the lines of the region...
//   ```
//
// and the source file marks the region with two lines that contain `// [backward-loop]`
// (the markers of Doxygen's \snippet command). The quoted lines are the ones between the two
// markers, with their common indentation removed; marker lines of other regions inside it are
// left out, so regions may nest or overlap. Coursework task markers (`// TASK 5.3 begin: ...`,
// `// TASK 5.3 end`; programs/coursework) are left out too: they mark a student's task in the
// source and have no place in the book's text.
//
// In a handout (a student's copy: programs/coursework/handout writes programs/coursework/handout.json
// at its root, naming the tasks it stubs), the code of those tasks is the student's: a quote
// that holds one of them matches whatever lines stand between its markers, and only the code
// around it must equal the quote. `update` leaves such quotes alone, so that it never copies a
// student's solution into the book.
//
//   snippets check  <repo-root> <markdown files...>   report every quote that differs
//   snippets update <repo-root> <markdown files...>   rewrite the quotes from the sources
//   snippets selftest <testdata-dir> <scratch-dir>    the checker's own test (see below)
//
// Exit status: 0 when every quote matches (or was updated), 1 when some quote is wrong or
// cannot be resolved, 2 on a usage error.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Lines = std::vector<std::string>;

struct Problem {
  std::string file;
  int line;  // 1-based line of the <!-- snippet: ... --> comment
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

std::string rstrip(const std::string& s) {
  const auto end = s.find_last_not_of(" \t");
  return end == std::string::npos ? "" : s.substr(0, end + 1);
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  return begin == std::string::npos ? "" : rstrip(s.substr(begin));
}

const std::regex& marker_line() {
  static const std::regex re(R"(^\s*//\s*\[[A-Za-z0-9_.-]+\]\s*$)");
  return re;
}

// `// TASK 5.3 begin: rotate the pairs` or `// TASK 5.3 end`: the coursework's task markers.
const std::regex& task_marker_line() {
  static const std::regex re(R"(^\s*//\s*TASK\s+([0-9]+)\.([0-9]+)\s+(begin|end)\b.*$)");
  return re;
}

// The tasks whose code is the student's: those a handout's record names (none elsewhere).
using Tasks = std::vector<std::string>;

Tasks student_tasks(const fs::path& root) {
  std::ifstream in(root / "tools" / "coursework" / "handout.json");
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  const std::string record = text.str();
  std::smatch list;
  if (!std::regex_search(record, list, std::regex(R"re("tasks"\s*:\s*\[([^\]]*)\])re"))) return {};
  Tasks tasks;
  const std::string items = list[1];
  const std::regex task(R"re("([0-9]+\.[0-9]+)")re");
  for (auto it = std::sregex_iterator(items.begin(), items.end(), task);
       it != std::sregex_iterator(); ++it)
    tasks.push_back((*it)[1]);
  return tasks;
}

// The region between the two `// [name]` lines of a source file, or the reason there is none.
// `parts` are its lines cut at the code of the student's tasks: the quote must hold parts[0],
// then anything, then parts[1], ... (one part when the region holds no such task).
struct Region {
  Lines lines;
  std::string error;
  std::vector<Lines> parts;
  std::string student_task;  // the first of the student's tasks in the region, if any
};

Region no_region(const std::string& why) {
  Region region;
  region.error = why;
  return region;
}

Region extract_region(const fs::path& root, const std::string& file, const std::string& name,
                      const Tasks& student = {}) {
  const auto source = read_lines(root / file);
  if (!source) return no_region("cannot open source file " + file);
  const std::string marker = "// [" + name + "]";
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < source->size(); ++i)
    if ((*source)[i].find(marker) != std::string::npos) at.push_back(i);
  if (at.size() != 2)
    return no_region("marker '" + marker + "' occurs " + std::to_string(at.size()) + " times in " +
                     file + " (expected 2: before and after the region)");
  Lines lines;
  std::vector<bool> students;  // per line: inside a student's task
  std::string student_task;
  bool in_student = false;
  for (std::size_t i = at[0] + 1; i < at[1]; ++i) {
    std::smatch task;
    if (std::regex_match((*source)[i], task, task_marker_line())) {
      const std::string id =
          std::to_string(std::stoi(task[1])) + "." + std::to_string(std::stoi(task[2]));
      const bool theirs = std::find(student.begin(), student.end(), id) != student.end();
      in_student = theirs && task[3] == "begin";
      if (in_student && student_task.empty()) student_task = id;
      continue;
    }
    if (std::regex_match((*source)[i], marker_line())) continue;
    lines.push_back(rstrip((*source)[i]));
    students.push_back(in_student);
  }
  std::size_t indent = std::string::npos;
  for (const auto& line : lines)
    if (!line.empty()) indent = std::min(indent, line.find_first_not_of(" \t"));
  for (auto& line : lines)
    if (!line.empty()) line.erase(0, indent);
  if (lines.empty()) return no_region("marker '" + marker + "' in " + file + " encloses no lines");
  std::vector<Lines> parts(1);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (students[i]) {
      if (i == 0 || !students[i - 1]) parts.emplace_back();
      continue;
    }
    parts.back().push_back(lines[i]);
  }
  // a task that ends the region: the quote may end with anything
  if (!students.empty() && students.back()) parts.emplace_back();
  return {lines, "", parts, student_task};
}

// Does block hold parts[0], anything, parts[1], anything, ..., parts[n-1], in that order,
// with nothing before the first part and nothing after the last?
bool matches_around_tasks(const Lines& block, const std::vector<Lines>& parts) {
  if (parts.size() == 1) return block == parts[0];
  const Lines& first = parts.front();
  const Lines& last = parts.back();
  if (block.size() < first.size() + last.size()) return false;
  if (!std::equal(first.begin(), first.end(), block.begin())) return false;
  if (!std::equal(last.begin(), last.end(), block.end() - static_cast<long>(last.size())))
    return false;
  // each middle part at its earliest place (leftmost is optimal when the gaps take anything)
  auto at = block.begin() + static_cast<long>(first.size());
  const auto end = block.end() - static_cast<long>(last.size());
  for (std::size_t p = 1; p + 1 < parts.size(); ++p) {
    at = std::search(at, end, parts[p].begin(), parts[p].end());
    if (at == end && !parts[p].empty()) return false;
    at += static_cast<long>(parts[p].size());
  }
  return true;
}

// One quote in a markdown file: the comment line and the fenced block after it.
struct Quote {
  std::size_t comment;  // index of the <!-- snippet: --> line
  std::size_t open;     // index of the opening fence
  std::size_t close;    // index of the closing fence
  std::string file, name;
};

const std::regex& quote_line() {
  static const std::regex re(R"(^\s*<!--\s*snippet:\s*(\S*)\s*-->\s*$)");
  return re;
}

// Finds the quotes of one markdown file; malformed ones become problems.
std::vector<Quote> find_quotes(const std::string& md_name, const Lines& md,
                               std::vector<Problem>& problems) {
  std::vector<Quote> quotes;
  std::string outside_fence;  // the fence of a code block we are in that is not a quote
  for (std::size_t i = 0; i < md.size(); ++i) {
    const std::string text = trim(md[i]);
    if (!outside_fence.empty()) {
      if (text == outside_fence) outside_fence.clear();
      continue;
    }
    if (text.rfind("```", 0) == 0) {  // a code block that may show the syntax itself
      outside_fence = text.substr(0, text.find_first_not_of('`'));
      continue;
    }
    std::smatch match;
    if (!std::regex_match(md[i], match, quote_line())) continue;
    const int line = static_cast<int>(i) + 1;
    const std::string target = match[1];
    const auto hash = target.find('#');
    if (hash == std::string::npos || hash == 0 || hash + 1 == target.size()) {
      problems.push_back(
          {md_name, line, "expected <!-- snippet: path/to/file#marker -->, got '" + target + "'"});
      continue;
    }
    if (i + 1 >= md.size() || trim(md[i + 1]).rfind("```", 0) != 0) {
      problems.push_back({md_name, line,
                          "the snippet comment must be followed at once by a "
                          "```cpp code block"});
      continue;
    }
    const std::string fence = trim(md[i + 1]).substr(0, trim(md[i + 1]).find_first_not_of('`'));
    std::size_t close = i + 2;
    while (close < md.size() && trim(md[close]) != fence) ++close;
    if (close >= md.size()) {
      problems.push_back({md_name, line,
                          "the code block after the snippet comment is never "
                          "closed"});
      continue;
    }
    quotes.push_back({i, i + 1, close, target.substr(0, hash), target.substr(hash + 1)});
    i = close;
  }
  return quotes;
}

// Checks (and, when `update` is set, rewrites) the quotes of one markdown file.
// Returns the number of quotes seen.
int process(const fs::path& root, const std::string& md_name, bool update,
            std::vector<Problem>& problems, std::ostream& log) {
  const Tasks student = student_tasks(root);
  auto md = read_lines(md_name);
  if (!md) {
    problems.push_back({md_name, 0, "cannot open the markdown file"});
    return 0;
  }
  const std::vector<Quote> quotes = find_quotes(md_name, *md, problems);
  Lines rewritten;
  std::size_t copied = 0;  // lines of *md already moved into `rewritten`
  bool changed = false;
  for (const Quote& quote : quotes) {
    const int line = static_cast<int>(quote.comment) + 1;
    const std::string where = quote.file + "#" + quote.name;
    const Region region = extract_region(root, quote.file, quote.name, student);
    Lines block;
    for (std::size_t i = quote.open + 1; i < quote.close; ++i) block.push_back(rstrip((*md)[i]));
    rewritten.insert(rewritten.end(), md->begin() + static_cast<long>(copied),
                     md->begin() + static_cast<long>(quote.open) + 1);
    copied = quote.open + 1;
    if (!region.error.empty()) {
      problems.push_back({md_name, line, region.error});
      continue;
    }
    if (block == region.lines) continue;
    if (!region.student_task.empty()) {
      // The student's task: its lines are theirs; the code around it must be the book's.
      if (matches_around_tasks(block, region.parts)) continue;
      problems.push_back({md_name, line,
                          "quote of " + where + " differs from the source outside task " +
                              region.student_task +
                              " (the code around the task is given and "
                              "quoted by the book): undo the change there; `snippets update` "
                              "leaves this quote alone, as it holds your code"});
      continue;
    }
    if (update) {
      rewritten.insert(rewritten.end(), region.lines.begin(), region.lines.end());
      copied = quote.close;
      changed = true;
      log << md_name << ":" << line << ": updated " << where << "\n";
      continue;
    }
    std::size_t k = 0;
    while (k < block.size() && k < region.lines.size() && block[k] == region.lines[k]) ++k;
    std::ostringstream reason;
    reason << "quote of " << where << " differs from the source at line " << k + 1
           << " of the block";
    if (block.size() != region.lines.size())
      reason << " (block has " << block.size() << " lines, source region " << region.lines.size()
             << ")";
    reason << "; run `snippets update` or fix the text";
    problems.push_back({md_name, line, reason.str()});
  }
  if (changed) {
    rewritten.insert(rewritten.end(), md->begin() + static_cast<long>(copied), md->end());
    std::ofstream out(md_name);
    for (const auto& l : rewritten) out << l << "\n";
    if (!out) problems.push_back({md_name, 0, "could not write the updated file"});
  }
  return static_cast<int>(quotes.size());
}

int run(const std::string& mode, const fs::path& root, const std::vector<std::string>& files,
        std::ostream& log, std::ostream& errors) {
  std::vector<Problem> problems;
  int count = 0;
  for (const auto& file : files) count += process(root, file, mode == "update", problems, log);
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  for (const auto& p : problems) errors << p.file << ":" << p.line << ": " << p.reason << "\n";
  log << "snippets " << mode << ": " << count << " quotes in " << files.size() << " files, "
      << problems.size() << " problems\n";
  return problems.empty() ? 0 : 1;
}

// The checker's own test. bad.md in the test data marks each quote that must fail with a
// line `<!-- expect-error: words -->` just before it: check must report exactly those quotes,
// each with a reason containing the words. Then update, run on a copy, must repair the
// quotes whose source exists and leave the rest reported; good.md must pass as it is.
int selftest(const fs::path& data, const fs::path& scratch) {
  int failures = 0;
  auto fail = [&](const std::string& what) {
    std::cerr << "selftest: " << what << "\n";
    ++failures;
  };
  std::ostringstream quiet;
  if (run("check", data, {(data / "good.md").string()}, quiet, quiet) != 0)
    fail("good.md should pass:\n" + quiet.str());

  // quote line -> words its reason must contain, from the expect-error lines of a file
  auto expectations = [&](const fs::path& file) {
    std::map<int, std::string> expected;
    const std::regex expect(R"(^\s*<!--\s*expect-error:\s*(.*?)\s*-->\s*$)");
    const auto md = read_lines(file);
    if (!md) fail("cannot read " + file.string());
    for (std::size_t i = 0; md && i + 1 < md->size(); ++i) {
      std::smatch match;
      if (std::regex_match((*md)[i], match, expect)) expected[static_cast<int>(i) + 2] = match[1];
    }
    return expected;
  };
  auto reported = [&](const fs::path& file, bool update) {
    std::vector<Problem> problems;
    std::ostringstream sink;
    process(data, file.string(), update, problems, sink);
    std::map<int, std::string> lines;
    for (const auto& p : problems) lines[p.line] = p.reason;
    return lines;
  };

  const fs::path bad = data / "bad.md";
  const auto expected = expectations(bad);
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
  if (expected.empty()) fail("bad.md has no expect-error lines");

  // Update a copy; afterwards only the quotes that update cannot fix may be reported.
  fs::create_directories(scratch);
  const fs::path copy = scratch / "bad.md";
  fs::copy_file(bad, copy, fs::copy_options::overwrite_existing);
  reported(copy, true);
  const auto after = reported(copy, false);
  for (const auto& [line, words] : expectations(copy)) {
    const bool fixable = words.find("differs") != std::string::npos;
    const bool still = after.count(line) > 0;
    if (fixable && still)
      fail("update did not repair the quote at line " + std::to_string(line) + " of the copy");
    if (!fixable && !still)
      fail("update hid the unresolvable quote at line " + std::to_string(line) + " of the copy");
  }

  // A handout whose record names task 9.1: its code is the student's. The quote shows the
  // stub; the source holds the student's solution. That matches; a change to the code around
  // the task does not, and update leaves the quote alone (it would copy the solution).
  const fs::path handout = scratch / "handout";
  fs::create_directories(handout / "tools" / "coursework");
  std::ofstream(handout / "tools" / "coursework" / "handout.json")
      << "{\"chapters\": [9], \"tasks\": [\"9.1\"]}\n";
  auto write_source = [&](const std::string& before_task) {
    std::ofstream(handout / "source.cpp")
        << "// [task]\n"
        << before_task << "\n  // TASK 9.1 begin: double the number\n"
        << "  const int y = x + x;\n  return y;\n  // TASK 9.1 end\n}\n// [task]\n";
  };
  const std::string quote =
      "<!-- snippet: source.cpp#task -->\n```cpp\nint twice(int x) {\n"
      "  throw ag::Error(\"Task 9.1 not implemented: double the number\");\n}\n```\n";
  std::ofstream(handout / "book.md") << quote;
  const std::string book = (handout / "book.md").string();
  write_source("int twice(int x) {");
  std::ostringstream sink;
  if (run("check", handout, {book}, sink, sink) != 0)
    fail("a handout's quote of a solved task should pass:\n" + sink.str());
  write_source("long twice(int x) {");  // the given code changed
  sink.str("");
  if (run("check", handout, {book}, sink, sink) == 0 ||
      sink.str().find("outside task 9.1") == std::string::npos ||
      sink.str().find("run `snippets update`") != std::string::npos)
    fail("a change outside the student's task should fail, without advising update:\n" +
         sink.str());
  run("update", handout, {book}, sink, sink);
  const auto after_update = read_lines(book);
  if (!after_update ||
      std::find(after_update->begin(), after_update->end(), "  return y;") != after_update->end())
    fail("update copied the student's code into the handout's book");
  fs::remove(handout / "tools" / "coursework" / "handout.json");  // the repository: exact
  write_source("int twice(int x) {");
  sink.str("");
  if (run("check", handout, {book}, sink, sink) == 0)
    fail("outside a handout, a quote must equal the task's code");

  std::cout << "snippets selftest: " << expected.size() << " expected failures, " << failures
            << " selftest failures\n";
  return failures == 0 ? 0 : 1;
}

int usage() {
  std::cerr << "usage: snippets check <repo-root> <markdown files...>\n"
               "       snippets update <repo-root> <markdown files...>\n"
               "       snippets selftest <testdata-dir> <scratch-dir>\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  const std::vector<std::string> rest(argv + 3, argv + argc);
  try {
    if (mode == "selftest") return rest.size() == 1 ? selftest(argv[2], rest[0]) : usage();
    if (mode != "check" && mode != "update") {
      std::cerr << "snippets: unknown mode '" << mode << "'\n";
      return usage();
    }
    if (!fs::is_directory(argv[2])) {
      std::cerr << "snippets: repo root '" << argv[2] << "' is not a directory\n";
      return 2;
    }
    return run(mode, argv[2], rest, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "snippets: " << e.what() << "\n";
    return 2;
  }
}
