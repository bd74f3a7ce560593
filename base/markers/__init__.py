"""The book's markers: the one reference for every comment grammar that ties its text to its
code and its runs, and the one implementation of each (Python 3, standard library only).

Every tool that reads a marker imports this package: programs/tools/snippets.py and
programs/tools/results.py (the checkers behind the tests SnippetsMatchSources and
QuotedResultsMatchSummaries), programs/coursework (the handout), docs/md_filter.py (the
Doxygen book), programs/tools/walk_chapters.py (the walk) and .ci/run (python3 -m markers
test-command README.md).

Snippet quote (markdown; snippets.py): the comment names a source file, relative to the
repository, and a region in it; the fenced block right after it holds the region's lines.

    <!-- snippet: ag/src/engine.cpp#record -->
    ```cpp
    Tensor record(const char* op, Tensor output, std::vector<Tensor> inputs, BackwardFn backward) {
    ...the other lines of the region...
    ```

Snippet region (C++ source; snippets.py): two lines that contain `// [name]` enclose the
region. The quote holds the lines between them, right blanks dropped and their common
indentation removed. Lines that are only another region's marker are left out (regions may
nest or overlap), and so are task markers. In a handout (its record, HANDOUT_RECORD, names
the tasks it stubs) a quote matches whatever code stands in those tasks.

    // [record]
    Tensor record(const char* op, Tensor output, std::vector<Tensor> inputs, BackwardFn backward) {
    ...
    // [record]

Task (C++ source; tasks.py): a coursework task's solution, one or more regions per task,
each the tail of a function body (programs/coursework replaces it with a stub). Task numbers
read as chapter.task (leading zeros dropped); a region never holds another one, and a
`// TASK` comment of any other form is an error.

    // TASK 5.3 begin: rotate the pairs
    ...the solution...
    // TASK 5.3 end

Test marker (C++ test source; test_labels.py): comment lines right above a test's TEST,
TEST_F, TYPED_TEST or TEST_P line say which coursework tasks it grades and which chapter it
belongs to; they become its ctest labels (cmake/TestLabels.cmake runs `python3 -m markers
test-labels`) and the grader's list of tests per task (programs/coursework).

    // grades: task 5.3              labels task5.3 and ch05
    // grades: task 0.2, task 0.4    several tasks
    // chapter: 08                   label ch08: a test of chapter 8 that lives elsewhere
    TEST(Ch05Rope, RotationPreservesNorm) {

Results block (markdown; results.py): lines of a run's summary (JSON), either as a fenced
block right after the marker or, for a table, as the lines up to the end marker.

    <!-- results: results/summary.json#output?lines=1-2 -->
    ```text
    ...the first two lines of summary["output"]...
    ```

    <!-- results: ../../lab/results/table.json#table?rows=rope,alibi -->
    | encoding | task | ... |
    |---|---|...
    | rope | shiftk | ... |
    <!-- /results -->

  The path is relative to the markdown file (results/summary.json when left out, with its
  `#`); the key walks the JSON by object keys and array indices joined by dots (a key with
  blanks or dots goes in brackets, as a whole part: `means.copy.[none (1 layer)].accuracy`),
  and leads to a string (split at line ends) or an array of strings. Options after `?`, joined by `&`,
  applied in the order of their names: `lines=3-10` keeps those lines (1-based, inclusive);
  `rows=a,b` keeps a table's two header lines and the rows whose first cell is a or b.

Inline value (markdown; results.py): a number in the prose, followed at once by the comment
that names its value in a summary (the same targets; one option, word=N, below).

    ShiftK reaches 99.8%<!-- value: runs.shiftk.accuracy --> of the held-out tokens
    the dot product is 124.4<!-- value: values.dot_r1 --> at r = 1
    with 8 layers, 99.7%<!-- value: ../07-nope/results/summary.json#runs.shiftk-l8.accuracy -->

  A run's number that its summary holds only in a printed line is named by the line and the
  word (1-based, blank-separated) that holds it; the word's first number is the value:

    a speed-up of 24.8<!-- value: ../A-performance/results/summary.json#output.14?word=5 -->

  The number (digits, perhaps a sign, decimals and an exponent: 3.58e-7; thousands may be
  grouped by commas: 2,294,273) and its comment stand on one line. The
  number must be the value rounded to the decimals written (within half a unit of the last
  digit: a value half-way between two roundings may go either way). A `%` right after the
  number says the value is a fraction, shown times 100.

Markers inside a fenced code block that is not a quote (one that shows the syntax) are text,
not markers: snippets and results both skip such blocks (lines.ShownCode).

Test command (README.md; comments.py): CI runs the first line after the marker that does
not open a code fence, so that the README's command and CI's cannot drift apart.

    <!-- test-command: .ci/run reads the next line and runs it -->
    ```sh
    cmake --preset default && cmake --build --preset default && ctest --preset default
    ```

Walk (markdown; walk.py): every command of a shell block (```sh) of the chapters and
README.md runs as written, in reading order, from the top of the repository (CI's walk stage,
programs/tools/walk_chapters.py), unless a marker on the lines right above the block (other
one-line markers may stand between) says what runs instead. N numbers the block's commands
from 1: its lines without blank and comment lines, a line ending in a backslash joined to the
next, a loop (for ... do ... done) one command, and an `&&` chain or a pipe one command; `N-M`
or `all` name several.

    <!-- walk 1: fast: build/default/pe train -e rope --steps 2 --out build/walk # 1,500 steps -->
    <!-- walk 3-4: skip: CI's live-pages stage builds the module and the book with it -->
    ```sh
    build/default/pe train -e rope
    ...
    ```

  `fast: COMMAND # REASON` runs COMMAND instead of command N: the same programs in the same
  order (a program is the first word of a simple command, after variable assignments, with
  the plain lower-case words that follow it: `build/default/pe train`, `cmake`), a command that
  does not train for long, and nothing after the first ` # ` but the reason. It writes where
  the reader's command would (a later line reads it) or under build/walk/, never into a tracked
  file: the walk fails when git status shows a change. `skip: REASON` runs nothing. A command
  that trains for long (`pe train` without --steps of at most 200, `pe table` without --fast
  or such --steps, a chapter's experiment chNN_experiment from chapter 2 on without --fast,
  such --steps or --help) must have a marker; so must a command that takes minutes for another
  reason (a benchmark), or the walk's time limit stops it.

Live figure (markdown; comments.py): on a line of its own, the place of an interactive
figure in the Doxygen book (programs/web/page/figures/NAME.js); a forge shows nothing.

    <!-- live-figure: rope_planes -->

Expected error (the checkers' test data only; comments.py): the next line (a quote, or a line
with inline values) must be reported, with a reason containing the words.

    <!-- expect-error: occurs 0 times -->
"""
from .comments import expected_errors, live_figure_name, test_command
from .errors import MarkerError
from .lines import (ShownCode, first_difference, read_lines, trim, with_spans_replaced,
                    write_lines)
from .results import (ResultsBlock, Summaries, Value, block_lines, format_number, scan_results,
                      value_of, value_shown_as)
from .test_labels import TestMarker, find_test_markers
from .snippets import (HANDOUT_RECORD, Quote, Region, find_quotes, matches_around_tasks,
                       quoted_lines, source_region, student_tasks, with_quotes_replaced)
from .tasks import TaskRegion, find_task_regions, task_marker
from .walk import Block, Command, Step, walk_blocks
