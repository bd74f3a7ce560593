"""The walk: every command of the book's shell blocks, run as a reader runs it
(programs/tools/walk_chapters.py), or covered by a marker right above its block that says what
runs instead and why (the grammar's reference is base/markers/__init__.py).

    <!-- walk 1: fast: build/default/pe train -e rope --steps 2 --out build/walk # 1,500 steps -->
    <!-- walk 3-4: skip: the WebAssembly build is CI's live-pages stage -->
    ```sh
    ...
    ```

A shell block is a fenced block whose info string is sh (or bash, shell). Its commands are its
lines, blank lines and comment lines left out, a line that ends in a backslash joined to the
next, and a compound command (for ... do ... done, if ... then ... fi) running on to its end;
`&&` chains and pipes are one command. The markers stand on the lines right above the fence,
one per line (other one-line markers may stand between them and the fence); N counts the
block's commands from 1 (`N-M`, or `all`, for several). `fast` runs the variant instead of
command N: the same programs in the same order (the program and the plain words after it:
`build/default/pe train`, `cmake`), a command that trains briefly, its reason after ` # `.
`skip` runs nothing, for the reason given. A command that trains for long (`pe train` without
a small --steps, `pe table` without --fast, a chapter's experiment from chapter 2 on without
--fast or a small --steps) must be covered by a marker.
"""
import re
from dataclasses import dataclass, field

from .errors import MarkerError
from .lines import closing_fence, fence_of, trim

SHELL_LANGUAGES = ("sh", "bash", "shell")
FAST_STEPS = 200  # the most training steps a command may ask for and still run as written

_MARKER = re.compile(r"^\s*<!--\s*walk\b(.*?)-->\s*$")
_COMMENT_LINE = re.compile(r"^\s*<!--.*-->\s*$")
_MARKER_BODY = re.compile(r"^\s+(all|\d+(?:-\d+)?)\s*:\s*(fast|skip)\s*:\s*(.*?)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PLAIN_WORD = re.compile(r"^[a-z][a-z0-9_]*$")
_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")", "\n")
_REDIRECTIONS = ("&>", ">&", ">>", ">", "<")
_TOKENS = ("&&", "||", ";;", "&>", ">&", ">>", ";", "|", "&", "(", ")", ">", "<", "\n")
_CONTROL = {"for", "case", "select", "in", "done", "fi", "esac", "{", "}"}
_LEADING = {"!", "do", "then", "else", "elif", "while", "until", "if", "time"}
_OPENERS, _CLOSERS = {"do", "then", "case"}, {"done", "fi", "esac"}
_TRAINING_EXPERIMENT = re.compile(r"^ch(0[2-9]|[1-9][0-9])_experiment$")


@dataclass
class Command:
    """One command of a shell block as the reader runs it."""
    line: int   # 1-based line of the markdown where it starts
    text: str   # as written; a continued command keeps its backslashes and line ends


@dataclass
class Step:
    """What the walk does with one command: `run` it as written, run its `fast` variant, or
    `skip` it; reason is the marker's (empty for `run`)."""
    command: Command
    action: str
    text: str = ""      # what runs: the command, or its variant
    reason: str = ""
    marker: int = 0     # 1-based line of the marker (0: none)


@dataclass
class Block:
    fence: int                                   # 1-based line of the opening fence
    commands: list = field(default_factory=list)
    steps: list = field(default_factory=list)


def words(text):
    """The words and operators of a shell command, as bash splits them: quotes and backslashes
    kept out of the words, a comment (a word that starts with #) dropped to the line's end, and
    each operator (&& || ; | & parentheses, a line end) a word of its own. Enough of the shell
    for the book's blocks; a quote left open is an error."""
    out, word, quote, i, has_word = [], "", None, 0, False
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and i + 1 < len(text) and text[i + 1] in '"\\$`':
                i += 1
                word += text[i]
            else:
                word += c
            i += 1
            continue
        if c in "'\"":
            quote, has_word = c, True
        elif c == "\\" and i + 1 < len(text):
            i += 1
            if text[i] != "\n":
                word += text[i]
                has_word = True
        elif c == "#" and not has_word:
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif c in " \t" or any(text.startswith(op, i) for op in _TOKENS):
            if has_word:
                out.append(word)
                word, has_word = "", False
            if c not in " \t":
                op = next(op for op in _TOKENS if text.startswith(op, i))
                if op in _REDIRECTIONS and out and out[-1].isdigit() and text[i - 1] != " ":
                    out.pop()  # 2>&1: the descriptor belongs to the redirection
                out.append(op)
                i += len(op)
                continue
        else:
            word += c
            has_word = True
        i += 1
    if quote:
        raise MarkerError(f"a quote ({quote}) is not closed")
    if has_word:
        out.append(word)
    return out


def simple_commands(text):
    """The simple commands of a command, each a list of words, in order: the parts between
    operators, without the keywords of loops and conditions and without leading variable
    assignments (PE_SIMD=avx2 prog runs prog) and redirections (> FILE, 2>&1)."""
    out, current, redirected = [], [], False
    for w in words(text) + [";"]:
        if w in _OPERATORS:
            if current:
                out.append(current)
            current, redirected = [], False
        elif w in _REDIRECTIONS:
            redirected = True
        elif redirected:
            redirected = False  # the file or descriptor of the redirection
        else:
            current.append(w)
    result = []
    for parts in out:
        while parts and (parts[0] in _LEADING or _ASSIGNMENT.match(parts[0])):
            parts = parts[1:]
        if parts and parts[0] not in _CONTROL:
            result.append(parts)
    return result


def program(parts):
    """A simple command's program: its first word and the plain words after it
    (`build/default/pe train`, `cmake`, `emcmake cmake`)."""
    name = [parts[0]]
    for w in parts[1:]:
        if not _PLAIN_WORD.match(w):
            break
        name.append(w)
    return " ".join(name)


def programs(text):
    """The programs of a command's simple commands, in order."""
    return [program(parts) for parts in simple_commands(text)]


def _option(parts, name):
    """The value of --name VALUE or --name=VALUE in a simple command, or None."""
    for i, w in enumerate(parts):
        if w == name and i + 1 < len(parts):
            return parts[i + 1]
        if w.startswith(name + "="):
            return w[len(name) + 1:]
    return None


def _few_steps(parts):
    steps = _option(parts, "--steps")
    return steps is not None and steps.isdigit() and int(steps) <= FAST_STEPS


def training(text):
    """Why the command trains for long (a sentence), or None when it does not: `pe train`
    without --steps of at most FAST_STEPS; `pe table` without --fast or such --steps; a
    chapter's experiment from chapter 2 on (chNN_experiment) without --fast, such --steps or
    --help."""
    for parts in simple_commands(text):
        base = parts[0].rsplit("/", 1)[-1]
        sub = parts[1] if len(parts) > 1 else ""
        if base == "pe" and sub == "train" and not _few_steps(parts):
            return f"pe train without --steps of at most {FAST_STEPS} trains for minutes"
        if base == "pe" and sub == "table" and "--fast" not in parts and not _few_steps(parts):
            return "pe table without --fast trains every encoding for 1,500 steps"
        if (_TRAINING_EXPERIMENT.match(base) and "--help" not in parts and "--fast" not in parts
                and not _few_steps(parts)):
            return f"{base} trains its reference runs for 1,500 steps (--fast or --steps N)"
    return None


def _block_commands(lines, start, end):
    """The commands of the block lines[start:end] (0-based), each with its 1-based line."""
    commands, text, first = [], "", 0
    for i in range(start, end):
        line = lines[i]
        if not text and (not trim(line) or trim(line).startswith("#")):
            continue
        if not text:
            first = i + 1
        text += ("\n" if text else "") + line
        if line.endswith("\\"):
            continue
        try:
            if _nesting(text) > 0:
                continue  # a loop or a condition goes on
        except MarkerError:
            continue  # a quote goes on to the next line

        commands.append(Command(first, text))
        text = ""
    if text:
        raise MarkerError(f"line {first}: the command does not end in its block")
    return commands


def _nesting(text):
    """How many compound commands the text leaves open: +1 for each word that opens one's body
    (do, then), -1 for each that closes it (done, fi), counted where a command starts."""
    depth, at_start = 0, True
    for w in words(text):
        if w in _OPERATORS:
            at_start = True
            continue
        if at_start and w in _OPENERS:
            depth += 1
        elif at_start and w in _CLOSERS:
            depth -= 1
        at_start = at_start and (w in _LEADING or w in _OPENERS or w in _CLOSERS
                                 or bool(_ASSIGNMENT.match(w)))
    return depth


def _marker_range(what, count):
    if what == "all":
        return 1, count
    first, _, last = what.partition("-")
    return int(first), int(last or first)


def walk_blocks(lines):
    """The shell blocks of a markdown file with what the walk does with each command.

    Returns (blocks, problems): problems is a list of (1-based line, reason) for every marker
    that is malformed, stands anywhere but right above a shell block, names a command the
    block does not have or one already covered, or gives a variant that runs other programs
    or trains for long; and for every command that trains for long and has no marker."""
    blocks, problems, pending = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _MARKER.match(line)
        if m:
            pending.append((i + 1, m.group(1)))
            i += 1
            continue
        if "<!-- walk" in line:
            problems.append((i + 1, "a walk marker is a line of its own: <!-- walk N: ... -->"))
        elif pending and _COMMENT_LINE.match(line):
            i += 1  # another marker between the walk markers and their block
            continue
        fence = fence_of(line)
        if fence is None:
            problems += [(n, "a walk marker must stand right above a shell block")
                         for n, _ in pending]
            pending = []
            i += 1
            continue
        end = closing_fence(lines, fence, i + 1)
        language = trim(line)[len(fence):].strip()
        if language in SHELL_LANGUAGES:
            try:
                block = Block(i + 1, _block_commands(lines, i + 1, end))
            except MarkerError as e:
                problems.append((i + 1, str(e)))
                block = Block(i + 1)
            _plan(block, pending, problems)
            blocks.append(block)
        else:
            problems += [(n, "a walk marker must stand right above a shell block")
                         for n, _ in pending]
        pending = []
        i = end + 1
    problems += [(n, "a walk marker must stand right above a shell block") for n, _ in pending]
    return blocks, problems


def _plan(block, markers, problems):
    """Fills block.steps from its markers; adds what is wrong to problems."""
    count = len(block.commands)
    covered, claimed = {}, set()
    for line, body in markers:
        m = _MARKER_BODY.match(body)
        if not m:
            problems.append((line, "expected <!-- walk N: fast: COMMAND # REASON --> or "
                                   "<!-- walk N: skip: REASON --> (N, N-M or all)"))
            continue
        what, action, rest = m.groups()
        first, last = _marker_range(what, count)
        if not 1 <= first <= last <= count:
            problems.append((line, f"the block has {count} commands, not {what}"))
            continue
        claimed.update(range(first, last + 1))  # reported here when wrong, not as unmarked
        if action == "fast":
            if first != last:
                problems.append((line, "a fast variant replaces one command, not " + what))
                continue
            variant, sep, reason = rest.partition(" # ")
            variant, reason = trim(variant), trim(reason)
            if not sep or not reason or not variant:
                problems.append((line, "a fast variant is 'COMMAND # REASON', both given"))
                continue
            problem = _variant_problem(block.commands[first - 1], variant)
            if problem:
                problems.append((line, problem))
                continue
            step = Step(block.commands[first - 1], "fast", variant, reason, line)
        else:
            if not rest:
                problems.append((line, "a skip gives its reason"))
                continue
            step = None
        for n in range(first, last + 1):
            if n in covered:
                problems.append((line, f"command {n} is already covered (line "
                                       f"{covered[n].marker})"))
                continue
            covered[n] = step or Step(block.commands[n - 1], "skip", "", rest, line)
    for n, command in enumerate(block.commands, 1):
        if n in covered:
            block.steps.append(covered[n])
            continue
        block.steps.append(Step(command, "run", command.text))
        if n in claimed:
            continue
        try:
            why = training(command.text)
        except MarkerError as e:
            why = str(e)
        if why:
            problems.append((command.line, f"{why}: give it a fast variant or skip it, with a "
                                           "<!-- walk N: ... --> marker above its block"))


def _variant_problem(command, variant):
    """Why variant cannot stand for command, or None."""
    try:
        theirs, ours = programs(command.text), programs(variant)
        long = training(variant)
    except MarkerError as e:
        return f"the variant: {e}"
    if theirs != ours:
        return (f"a fast variant runs the same programs as its command ({', '.join(theirs)}), "
                f"not {', '.join(ours)}")
    if long:
        return f"the fast variant is not fast: {long}"
    if variant == command.text:
        return "the variant is the command itself: leave it unmarked"
    return None


def selects_no_tests(output):
    """True when ctest's output says that its selection held no test: "No tests were found"
    (ctest exits with 0 then, unless its preset says noTestsAction: error) or, when it only
    lists them (-N), "Total Tests: 0"."""
    return ("No tests were found" in output
            or re.search(r"^Total Tests: 0$", output, re.M) is not None)
