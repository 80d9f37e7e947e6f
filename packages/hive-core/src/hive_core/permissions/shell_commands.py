"""What known commands do with their arguments: which are files read or written, which run another command, and
which make a command impossible to judge from its text.

:func:`analyse` looks at one :class:`~hive_core.permissions.shell_syntax.SimpleCommand` and returns an
:class:`Invocation`. Wrappers (``env``, ``timeout``, ``xargs``, ``find -exec``…) yield the command they run, shells
(``bash -c '...'``) the script they run, and file commands (``cat``, ``cp``, ``sed -i``, ``git diff --no-index``…) the
paths they read or change, so the policy can judge each under its own rules. A program is known by its name
however it is reached (``/usr/bin/pytest``, ``python -m pytest``, ``uv run pytest``, ``npx …``): launchers yield
what they may start, analysed with that program's option table (:func:`program_name`, :attr:`Invocation.launched`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Literal

from .shell_arithmetic import ARITHMETIC_VARIABLES
from .shell_arithmetic import literal_arithmetic
from .shell_arithmetic import literal_subscript
from .shell_syntax import ShellWord
from .shell_syntax import SimpleCommand
from .shell_syntax import dangerous_variable

__all__ = ["SHELLS", "CommandReach", "Invocation", "analyse", "program_name"]

Access = Literal["read", "edit"]

_Operands = Callable[[list[ShellWord], Mapping[str, list[ShellWord]]], list[tuple[Access, ShellWord]]]
"""Which of a command's operands are files, and how it uses each, from the operands and the options given."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox"})
"""Programs that run a shell script: from ``-c``, from a file, or from their input."""
_BASH_LIKE = frozenset({"sh", "bash", "dash", "ash"})

# Builtins that run text as code, or change what a later command name means.
_OPAQUE_BUILTINS: Mapping[str, str] = {
    "eval": "eval runs text built at run time",
    "source": "source runs a script file",
    ".": ". runs a script file",
    "alias": "alias changes what a later command name runs",
    "hash": "hash changes which program a command name runs",
    "enable": "enable loads or switches builtins",
    "trap": "trap runs text when a signal arrives",
    "bind": "bind changes the line editor",
    "fc": "fc runs commands from the history",
    "let": "let evaluates arithmetic, which can run code hidden in a variable",
    "coproc": "coproc runs a command in the background with pipes",
}
_NAME_TAKING_BUILTINS = frozenset({"read", "mapfile", "readarray", "getopts", "printf", "wait"})
# Builtins that declare or assign variables, when reached as a plain command (`command declare -i n=x`): the
# grammar reads only the bare keyword as a declaration.
_DECLARING_BUILTINS = frozenset({"declare", "typeset", "local", "export", "readonly", "unset"})


@dataclass
class CommandReach:
    """What commands touch, as far as the permission rules care, and why any of it cannot be told."""

    paths: list[tuple[Access, ShellWord]] = field(default_factory=list[tuple[Access, ShellWord]])
    """Files it reads or changes."""
    trees: list[ShellWord] = field(default_factory=list[ShellWord])
    """Directories whose every file it reads (``grep -r``, ``rg``, ``diff -r``, ``cp -r``)."""
    directories: list[ShellWord] = field(default_factory=list[ShellWord])
    """Directories it makes the working directory of what follows (``cd``)."""
    problems: list[str] = field(default_factory=list[str])
    """Why what it does cannot be told from its text."""
    denied: str | None = None
    """Set when the command is one that is never allowed (a shell reading a pipe)."""
    repository_paths: list[tuple[ShellWord, bool]] = field(default_factory=list[tuple[ShellWord, bool]])
    """Operands of a git command that prints file contents (``git diff``, ``log``, ``show``, ``blame``) that may
    be paths, each with whether it must be one (after ``--``): git reads the file, and compares a path outside
    the work tree as ``--no-index`` does."""

    def add(self, other: CommandReach) -> None:
        """Add what ``other`` touches (its ``denied``, when this has none)."""
        self.paths.extend(other.paths)
        self.trees.extend(other.trees)
        self.directories.extend(other.directories)
        self.problems.extend(other.problems)
        self.denied = self.denied or other.denied
        self.repository_paths.extend(other.repository_paths)


@dataclass
class Invocation(CommandReach):
    """What one simple command does, as far as the permission rules care."""

    nested: list[SimpleCommand] = field(default_factory=list[SimpleCommand])
    """Commands it runs (what a wrapper wraps), each judged on its own."""
    scripts: list[str] = field(default_factory=list[str])
    """Shell scripts it runs, given as fixed text (a ``bash -c`` payload): parsed and judged in full."""
    launched: list[SimpleCommand] = field(default_factory=list[SimpleCommand])
    """Programs a launcher may start (``python -m pytest``, ``uv run pytest``): their options and files are
    analysed as the program's own, but the bash rules judge the command as written, not these."""

    def not_fixed_text(self, where: str, word: ShellWord) -> None:
        """Note that ``word``, ``where`` in the command (``an argument of git``), is not fixed text."""
        self.problems.append(f"{where} ({word.source!r}) is not fixed text")


@dataclass
class _Words:
    """A command's words, read in order by an analyser that may also take the word after one (an option's value)
    by moving :attr:`index` on."""

    words: Sequence[ShellWord]
    index: int = 0
    """Where the next word to read stands."""

    def fixed(self, where: str, found: Invocation) -> Iterator[ShellWord]:
        """Each word of fixed text in turn from :attr:`index`. A process substitution (a pipe's path) is passed
        over; any other word that is not fixed text ends the reading, noted in ``found`` as ``where``."""
        while self.index < len(self.words):
            word = self.words[self.index]
            self.index += 1
            if word.literal:
                yield word
            elif not word.substitution:
                found.not_fixed_text(where, word)
                return


@dataclass(frozen=True)
class _Spec:
    """How a command's options and operands are read."""

    values: str = ""
    """Short options that take a value (``n`` for ``-n 5``)."""
    long_values: frozenset[str] = frozenset()
    """Long options that take a value in the next word when not written ``--name=value``."""
    reads: frozenset[str] = frozenset()
    """Options (``-f``, ``--file``) whose value is a file read."""
    edits: frozenset[str] = frozenset()
    """Options whose value is a file written."""
    asks: Mapping[str, str] = field(default_factory=dict[str, str])
    """Options that make the command run something or write where it cannot be judged, with the reason."""
    operands: _Operands | None = None
    """Which operands are read or written; ``None`` means every operand is read."""
    abbreviations: bool = True
    """Whether long options may be shortened to a unique prefix (GNU getopt_long)."""
    recursive: frozenset[str] | None = None
    """Options that make it read the directories it is given, file by file (empty: it always does)."""
    here: bool = False
    """Whether, reading recursively with no file operand, it reads the working directory."""


def _all(access: Access) -> _Operands:
    return lambda operands, _options: [(access, word) for word in operands]


def _after_first(access: Access) -> _Operands:
    # grep PATTERN FILE..., chmod MODE FILE...: the first operand is not a file (unless an option gave it).
    def operands(
        words: list[ShellWord], options: Mapping[str, list[ShellWord]]
    ) -> list[tuple[Access, ShellWord]]:
        given = any(name in options for name in ("-e", "--regexp", "-f", "--file", "--reference"))
        return [(access, word) for word in (words if given else words[1:])]

    return operands


def _copy(source: Access) -> _Operands:
    # cp/mv/ln SOURCE... DEST, or with -t DIR every operand is a source.
    def operands(
        words: list[ShellWord], options: Mapping[str, list[ShellWord]]
    ) -> list[tuple[Access, ShellWord]]:
        if "-t" in options or "--target-directory" in options:
            return [(source, word) for word in words]
        if len(words) == 1:
            return [(source, words[0])]
        found: list[tuple[Access, ShellWord]] = [(source, word) for word in words[:-1]]
        return [*found, ("edit", words[-1])]

    return operands


def _input_output(
    words: list[ShellWord], _options: Mapping[str, list[ShellWord]]
) -> list[tuple[Access, ShellWord]]:
    # uniq/xxd INPUT OUTPUT
    found: list[tuple[Access, ShellWord]] = [("read", word) for word in words[:1]]
    return found + [("edit", word) for word in words[1:]]


def _sed(words: list[ShellWord], options: Mapping[str, list[ShellWord]]) -> list[tuple[Access, ShellWord]]:
    files = words if ("-e" in options or "--expression" in options or "-f" in options) else words[1:]
    access: Access = "edit" if ("-i" in options or "--in-place" in options) else "read"
    return [(access, word) for word in files]


def _spec(
    values: str = "",
    long_values: Sequence[str] = (),
    reads: Sequence[str] = (),
    edits: Sequence[str] = (),
    asks: Mapping[str, str] | None = None,
    operands: _Operands | None = None,
    *,
    abbreviations: bool = True,
    recursive: Sequence[str] | None = None,
    here: bool = False,
) -> _Spec:
    return _Spec(
        values,
        frozenset(long_values),
        frozenset(reads),
        frozenset(edits),
        asks or {},
        operands,
        abbreviations,
        None if recursive is None else frozenset(recursive),
        here,
    )


_READER = _spec()
_HEAD = _spec("nc", ("--lines", "--bytes"))
_TAIL = _spec("ncs", ("--lines", "--bytes", "--pid", "--sleep-interval", "--max-unchanged-stats"))
_GREP = _spec(
    "efmABCdD",
    ("--regexp", "--max-count", "--context", "--after-context", "--before-context", "--label", "--devices"),
    reads=("-f", "--file", "--exclude-from"),
    operands=_after_first("read"),
    recursive=("-r", "-R", "--recursive", "--dereference-recursive"),
    here=True,
)
_DIGEST = _spec(reads=("-c", "--check"))

_SPECS: Mapping[str, _Spec] = {
    **dict.fromkeys(
        ("cat", "tac", "nl", "more", "less", "strings", "od", "hexdump", "cmp", "realpath"), _READER
    ),
    **dict.fromkeys(("md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "readlink"), _DIGEST),
    "head": _HEAD,
    "tail": _TAIL,
    "wc": _spec(reads=("--files0-from",)),
    "ls": _spec("IwT", ("--ignore", "--hide", "--width", "--tabsize", "--block-size")),
    "du": _spec(
        "dBX", ("--max-depth", "--block-size", "--exclude", "--threshold"), reads=("-X", "--exclude-from")
    ),
    "stat": _spec("c", ("--format", "--printf")),
    "file": _spec(
        "mfFeP",
        ("--magic-file", "--files-from", "--separator", "--exclude", "--parameter"),
        reads=("-m", "--magic-file", "-f", "--files-from"),
        asks={
            "-C": "file -C writes a compiled magic file",
            "--compile": "file --compile writes a compiled magic file",
        },
    ),
    "tree": _spec(
        "LPIHT",
        ("--filelimit", "--timefmt", "--charset", "--sort"),
        reads=("--fromfile",),
        edits=("-o",),
        asks={"-R": "tree -R writes a listing file into every directory"},
        abbreviations=False,
    ),
    "sort": _spec(
        "ktSo T",
        ("--key", "--field-separator", "--buffer-size", "--parallel", "--batch-size", "--sort"),
        reads=("--files0-from", "--random-source"),
        edits=("-o", "--output", "-T", "--temporary-directory"),
        asks={"--compress-program": "sort --compress-program runs a program"},
    ),
    "uniq": _spec("fsw", ("--skip-fields", "--skip-chars", "--check-chars"), operands=_input_output),
    "xxd": _spec("cgloms", operands=_input_output),
    "diff": _spec(
        "CUWILSxXF",
        ("--label", "--ignore-matching-lines", "--exclude", "--width", "--tabsize", "--line-format"),
        reads=("-X", "--exclude-from", "--from-file", "--to-file"),
        recursive=("-r", "--recursive"),
    ),
    **dict.fromkeys(("grep", "egrep", "fgrep"), _GREP),
    "rg": _spec(
        "efgtTmABCjMrEd",
        (
            "--regexp",
            "--glob",
            "--iglob",
            "--type",
            "--type-not",
            "--type-add",
            "--max-count",
            "--context",
            "--after-context",
            "--before-context",
            "--threads",
            "--max-columns",
            "--replace",
            "--encoding",
            "--max-depth",
            "--sort",
            "--sortr",
            "--max-filesize",
            "--colors",
            "--color",
            "--engine",
            "--pre-glob",
            "--path-separator",
            "--field-match-separator",
            "--field-context-separator",
            "--context-separator",
            "--dfa-size-limit",
            "--regex-size-limit",
            "--type-clear",
        ),
        reads=("-f", "--file", "--ignore-file"),
        asks={"--pre": "rg --pre runs a program on every file it searches"},
        operands=_after_first("read"),
        abbreviations=False,
        recursive=(),
        here=True,
    ),
    "sed": _spec(
        "efl",
        ("--expression", "--line-length"),
        reads=("-f", "--file"),
        operands=_sed,
    ),
    "tee": _spec(operands=_all("edit")),
    "touch": _spec("dtr", ("--date",), reads=("-r", "--reference"), operands=_all("edit")),
    "mkdir": _spec("m", ("--mode",), operands=_all("edit")),
    "rm": _spec(operands=_all("edit")),
    "rmdir": _spec(operands=_all("edit")),
    "unlink": _spec(operands=_all("edit")),
    "truncate": _spec("sr", ("--size",), reads=("-r", "--reference"), operands=_all("edit")),
    "shred": _spec("nsu", ("--iterations", "--size", "--remove"), operands=_all("edit")),
    **dict.fromkeys(
        ("chmod", "chown", "chgrp"), _spec(reads=("--reference",), operands=_after_first("edit"))
    ),
    "cp": _spec(
        "tS",
        ("--suffix",),
        edits=("-t", "--target-directory"),
        operands=_copy("read"),
        recursive=("-r", "-R", "-a", "--recursive", "--archive"),
    ),
    "mv": _spec("tS", ("--suffix",), edits=("-t", "--target-directory"), operands=_copy("edit")),
    "ln": _spec("tS", ("--suffix",), edits=("-t", "--target-directory"), operands=_copy("read")),
    "install": _spec(
        "tSmogC", ("--suffix", "--mode", "--owner", "--group"), edits=("-t",), operands=_copy("read")
    ),
    **dict.fromkeys(
        ("pytest", "py.test"),
        _spec(
            "kmpcor",
            ("--deselect", "--ignore", "--ignore-glob", "--rootdir", "--confcutdir", "--maxfail", "--tb"),
            reads=("-c", "--config-file", "--rootdir", "--confcutdir"),
            edits=("--basetemp", "--junitxml", "--junit-xml", "--report-log", "--resultlog"),
            asks={
                "-o": "pytest -o overrides settings",
                "--override-ini": "pytest --override-ini overrides settings",
            },
            operands=_all("read"),
            abbreviations=False,
        ),
    ),
}

# Wrappers: the options they take a value for, and whether the value count is fixed before the wrapped command.
_WRAPPER_VALUES: Mapping[str, str] = {
    "nice": "n",
    "nohup": "",
    "time": "",
    "setsid": "",
    "stdbuf": "ioe",
    "ionice": "cnp",
    "timeout": "sk",
    "chronic": "",
    "command": "",
    "builtin": "",
    "exec": "a",
    "sudo": "ugCDhprtUT",
    "doas": "uC",
    "xargs": "adEeIiLlnPs",
    "env": "uSC",
    "unbuffer": "",
    "caffeinate": "",
    "watch": "nd",
}
_WRAPPER_LONG_VALUES = frozenset(
    {
        "--signal",
        "--kill-after",
        "--adjustment",
        "--user",
        "--group",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-lines",
        "--max-procs",
        "--max-chars",
        "--replace",
        "--eof",
        "--unset",
        "--split-string",
        "--chdir",
        "--interval",
        "--differences",
        "--input",
        "--output",
        "--error",
        "--classdata",
        "--class",
    }
)


# Programs that start another program named among their arguments (`uv run --with x pytest`, `npx jest`,
# `poetry run pytest`). Their own options differ from tool to tool and version to version, so every argument
# that names a program with an option table is taken as where that program may start.
_LAUNCHERS = frozenset(
    {
        "uv",
        "uvx",
        "npx",
        "npm",
        "pnpm",
        "pnpx",
        "yarn",
        "bun",
        "bunx",
        "poetry",
        "pipx",
        "pdm",
        "hatch",
        "rye",
        "conda",
        "mamba",
        "micromamba",
        "pixi",
        "tox",
        "nox",
        "direnv",
        "dotenv",
    }
)
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*(?:-dbg)?|py")
_PYTHON_VALUES = frozenset("WXmc")


def program_name(word: ShellWord) -> str:
    """The program a command name runs, as the option tables know it: without its directory (``/usr/bin/pytest``,
    ``.venv/bin/pytest`` → ``pytest``)."""
    return os.path.basename(word.value) if word.literal else ""


def _launched(program: str, arguments: Sequence[ShellWord]) -> list[SimpleCommand]:
    """What a launcher (``uv run``, ``npx``…) or a Python interpreter (``python -m pytest``) may start, each with
    the arguments that follow it."""
    if _PYTHON.fullmatch(program):
        return _python_launched(arguments)
    if program not in _LAUNCHERS:
        return []
    return [
        SimpleCommand(list(arguments[index:]), source=" ".join(word.source for word in arguments[index:]))
        for index, word in enumerate(arguments)
        if word.literal and _has_table(program_name(word))
    ]


def _has_table(program: str) -> bool:
    return program in _SPECS or program in ("git", "find", "dd") or _PYTHON.fullmatch(program) is not None


def _python_launched(arguments: Sequence[ShellWord]) -> list[SimpleCommand]:
    """``python [options] -m MODULE args`` or ``python [options] SCRIPT args``: the module or script, as a
    program with those arguments."""
    index = 0
    while index < len(arguments):
        word = arguments[index]
        index += 1
        if not word.literal:
            return []
        text = word.value
        if text == "--" or not text.startswith("-") or text == "-":
            target = arguments[index] if text == "--" and index < len(arguments) else word
            rest = arguments[index + 1 :] if text == "--" else arguments[index:]
            return [SimpleCommand([target, *rest], source=target.source)] if text != "-" else []
        if text.startswith("--"):
            index += 1 if text == "--check-hash-based-pycs" else 0
            continue
        for position, letter in enumerate(text[1:], start=2):
            if letter not in _PYTHON_VALUES:
                continue
            value = text[position:]
            if not value and index < len(arguments):
                value_word = arguments[index]
                index += 1
            else:
                value_word = ShellWord(value, True, value)
            if letter == "c":
                return []  # code given inline: judged by the rules as written
            if letter == "m":
                module = value_word.value.removesuffix(".__main__")
                name = ShellWord(module, value_word.literal, value_word.source)
                return [SimpleCommand([name, *arguments[index:]], source=module)]
            break
    return []


def analyse(command: SimpleCommand) -> Invocation:
    """What ``command`` does."""
    found = Invocation()
    name = command.name
    if name is None:
        return found
    if not name.literal or name.pattern is not None:
        found.problems.append(f"the command name {name.source!r} is not fixed text")
        return found
    program = program_name(name)
    arguments = command.words[1:]
    for launched in _launched(program, arguments):
        # What xargs adds to the launcher's arguments reaches the launched program.
        launched.foreign_arguments = command.foreign_arguments
        found.launched.append(launched)
    if program in _OPAQUE_BUILTINS and program == name.value:
        found.problems.append(_OPAQUE_BUILTINS[program])
    elif program in _NAME_TAKING_BUILTINS and any(
        "[" in word.value or not word.literal or word.value in ARITHMETIC_VARIABLES for word in arguments
    ):
        found.problems.append(f"{program} assigns to a variable named by text that cannot be analysed")
    elif program in _DECLARING_BUILTINS and program == name.value:
        _declaring(program, arguments, found)
    elif program in ("test", "[") and program == name.value and any(word.value == "-v" for word in arguments):
        found.problems.append(
            f"{program} -v evaluates a variable name's subscript as arithmetic, which can run code"
        )
    elif program in ("cd", "pushd"):
        _change_directory(arguments, found)
    elif program in _WRAPPER_VALUES:
        _wrapper(program, command, found)
    elif program in SHELLS:
        _shell(program, command, found)
    elif program == "find":
        _find(command, found)
    elif program == "git":
        _git(arguments, found)
    elif program == "dd":
        _dd(arguments, found)
    elif program in _SPECS:
        _scan(program, arguments, _SPECS[program], found)
    if command.foreign_arguments and (program in _SPECS or program in ("git", "find", "cd", "dd")):
        found.problems.append(f"{program} gets file arguments from its input (xargs) that cannot be judged")
    return found


def _declaring(program: str, arguments: Sequence[ShellWord], found: Invocation) -> None:
    """``declare``/``export``/``unset``… reached as a plain command: what its words make bash evaluate."""
    for word in arguments:
        if not word.literal:
            found.problems.append(f"{program} names a variable that cannot be analysed ({word.source!r})")
            return
        text = word.value
        if text.startswith(("-", "+")):
            if program in ("declare", "typeset", "local") and set(text[1:]) & {"i", "n"}:
                found.problems.append(
                    f"{program} {text} makes later assignments evaluate text as arithmetic, which can run code"
                )
            continue
        name, equals, value = text.partition("=")
        name = name.removesuffix("+")
        base, bracket, subscript = name.partition("[")
        if bracket and not (subscript.endswith("]") and literal_subscript(subscript[:-1])):
            found.problems.append(f"{program} names an array element whose subscript can run code ({text!r})")
        elif equals and base in ARITHMETIC_VARIABLES and not literal_arithmetic(value):
            found.problems.append(f"an assignment to {base} is evaluated as arithmetic, which can run code")
        elif equals and dangerous_variable(base):
            found.problems.append(f"{program} sets {base}, which changes what programs run or load")


# -- options --------------------------------------------------------------------------------------------------


def _scan(program: str, arguments: Sequence[ShellWord], spec: _Spec, found: Invocation) -> None:
    operands: list[ShellWord] = []
    options: dict[str, list[ShellWord]] = {}
    index = 0
    while index < len(arguments):
        word = arguments[index]
        index += 1
        if not word.literal:
            if word.substitution:
                continue
            found.not_fixed_text(f"an argument of {program}", word)
            return
        text = word.value
        if text == "--":
            operands.extend(arguments[index:])
            break
        if text.startswith("--"):
            name, equals, attached = text.partition("=")
            name = _long_name(name, spec)
            if name in spec.asks:
                found.problems.append(spec.asks[name])
                return
            value: ShellWord | None = None
            if equals:
                value = ShellWord(attached, True, attached)
            elif (name in spec.reads or name in spec.edits or name in spec.long_values) and index < len(
                arguments
            ):
                value = arguments[index]
                index += 1
            options.setdefault(name, []).extend([value] if value is not None else [])
            if value is not None and (name in spec.reads or name in spec.edits):
                found.paths.append(("read" if name in spec.reads else "edit", value))
            continue
        if text.startswith("-") and len(text) > 1:
            for position, letter in enumerate(text[1:], start=2):
                flag = "-" + letter
                if flag in spec.asks:
                    found.problems.append(spec.asks[flag])
                    return
                if letter in spec.values or flag in spec.reads or flag in spec.edits:
                    rest = text[position:]
                    if rest:
                        value = ShellWord(rest, True, rest)
                    elif index < len(arguments):
                        value = arguments[index]
                        index += 1
                    else:
                        value = None
                    options.setdefault(flag, []).extend([value] if value is not None else [])
                    if value is not None and (flag in spec.reads or flag in spec.edits):
                        found.paths.append(("read" if flag in spec.reads else "edit", value))
                    break
                options.setdefault(flag, [])
            continue
        operands.append(word)
    pick = spec.operands or _all("read")
    uses = pick(operands, options)
    found.paths.extend(uses)
    if spec.recursive is not None and (not spec.recursive or any(flag in options for flag in spec.recursive)):
        read = [word for access, word in uses if access == "read"]
        found.trees.extend(read or ([ShellWord(".", True, ".")] if spec.here else []))


def _long_name(name: str, spec: _Spec) -> str:
    """``name`` as the long option it stands for: GNU tools accept any unambiguous prefix (``--outp``)."""
    if not spec.abbreviations or len(name) < 4:
        return name
    known = [*spec.asks, *spec.edits, *spec.reads, *spec.long_values]
    if name in known:
        return name
    matches = [option for option in known if option.startswith("--") and option.startswith(name)]
    return matches[0] if matches else name


# -- commands that change directory, wrap, or run scripts -----------------------------------------------------


def _change_directory(arguments: Sequence[ShellWord], found: Invocation) -> None:
    operands = [
        word for word in arguments if not (word.literal and word.value.startswith("-") and word.value != "-")
    ]
    if not operands:
        found.directories.append(ShellWord(os.path.expanduser("~"), True, "~"))
    elif operands[0].literal and operands[0].value == "-":
        found.problems.append("cd - returns to a directory the command line does not name")
    else:
        found.directories.append(operands[0])


def _wrapper(program: str, command: SimpleCommand, found: Invocation) -> None:
    arguments = command.words[1:]
    values = _WRAPPER_VALUES[program]
    index = 0
    needs_duration = program == "timeout"
    assignments: list[tuple[str, ShellWord]] = []
    while index < len(arguments):
        word = arguments[index]
        if not word.literal:
            found.not_fixed_text(f"an argument of {program}", word)
            return
        text = word.value
        if text == "--":
            index += 1
            break
        if program == "env" and "=" in text and not text.startswith("-"):
            name = text.split("=", 1)[0]
            assignments.append((name, ShellWord(text.split("=", 1)[1], True, text)))
            index += 1
            continue
        if program == "command" and text in ("-v", "-V"):
            return  # `command -v x` only says what x is
        if program == "env" and (text.startswith(("-S", "-C", "--split", "--chdir"))):
            found.problems.append(f"env {text} cannot be analysed")
            return
        if program == "xargs" and (text in ("-a", "--arg-file") or text.startswith("--arg-file=")):
            target = text.partition("=")[2] or (
                arguments[index + 1].value if index + 1 < len(arguments) else ""
            )
            found.paths.append(("read", ShellWord(target, True, target)))
        if text.startswith("--"):
            index += 1
            if "=" not in text and text in _WRAPPER_LONG_VALUES:
                index += 1
            continue
        if text.startswith("-") and len(text) > 1:
            index += 1
            taking = [letter for letter in text[1:] if letter in values]
            if taking and text.endswith(taking[-1]):
                index += 1
            continue
        if needs_duration:
            index += 1
            needs_duration = False
            continue
        break
    wrapped = arguments[index:]
    if not wrapped:
        return
    if program == "watch":
        if all(word.literal for word in wrapped):
            found.scripts.append(" ".join(word.value for word in wrapped))
        else:
            found.problems.append("watch runs text that is not fixed")
        return
    for name, _ in assignments:
        if dangerous_variable(name):
            found.problems.append(f"env sets {name}, which changes what programs run or load")
    found.nested.append(
        SimpleCommand(
            list(wrapped),
            assignments,
            " ".join(word.source for word in wrapped),
            command.input,
            foreign_arguments=program == "xargs" or command.foreign_arguments,
        )
    )


def _shell(program: str, command: SimpleCommand, found: Invocation) -> None:
    arguments = command.words[1:]
    if program == "busybox":
        if arguments and arguments[0].literal and arguments[0].value in SHELLS:
            _shell(arguments[0].value, SimpleCommand(arguments, [], "", command.input), found)
        else:
            found.nested.append(SimpleCommand(list(arguments), [], "", command.input))
        return
    script: ShellWord | None = None
    inline = False
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if not word.literal:
            found.not_fixed_text(f"an argument of {program}", word)
            return
        text = word.value
        index += 1
        if text in ("--", "-"):
            break
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 1
            continue
        if text.startswith("--"):
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            inline = inline or "c" in text[1:]
            continue
        script = word
        break
    if inline:
        if script is None:
            found.problems.append(f"{program} -c has no command")
        elif program not in _BASH_LIKE:
            # zsh glob qualifiers and fish's (...) substitutions run code a bash reading would miss.
            found.problems.append(f"{program} scripts are not analysed, only sh and bash ones")
        else:
            found.scripts.append(script.value)
        return
    if script is not None:
        found.paths.append(("read", script))
        found.problems.append(
            f"{program} runs the script file {script.value!r}, whose commands are not judged"
        )
        return
    if command.input == "pipe":
        found.denied = "piping into a shell"
    else:
        found.problems.append(f"{program} runs commands from its input, which cannot be judged")


def _find(command: SimpleCommand, found: Invocation) -> None:
    arguments = command.words[1:]
    roots: list[ShellWord] = []
    index = 0
    while (
        index < len(arguments) and arguments[index].literal and arguments[index].value in ("-H", "-L", "-P")
    ):
        index += 1
    while index < len(arguments):
        word = arguments[index]
        if word.literal and (word.value.startswith("-") or word.value in ("(", "!", ",")):
            break
        if not word.literal:
            found.not_fixed_text("a starting point of find", word)
            return
        roots.append(word)
        index += 1
    if not roots:
        roots = [ShellWord(".", True, ".")]
    found.paths.extend(("read", root) for root in roots)
    words = _Words(arguments, index)
    for word in words.fixed("an expression of find", found):
        text = word.value
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = words.index
            while end < len(arguments) and not (
                arguments[end].literal and arguments[end].value in (";", "+")
            ):
                end += 1
            wrapped = [
                root if word.literal and word.value == "{}" else word
                for word in arguments[words.index : end]
                for root in (roots if word.literal and word.value == "{}" else [word])
            ]
            if wrapped:
                found.nested.append(
                    SimpleCommand(wrapped, [], " ".join(w.source for w in arguments[words.index : end]), None)
                )
            words.index = end + 1
        elif text == "-delete":
            found.paths.extend(("edit", root) for root in roots)
        elif text in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            if words.index < len(arguments):
                found.paths.append(("edit", arguments[words.index]))
        elif (text in ("-newer", "-anewer", "-cnewer", "-samefile") and words.index < len(arguments)) or (
            text == "-files0-from" and words.index < len(arguments)
        ):
            found.paths.append(("read", arguments[words.index]))
            words.index += 1


def _dd(arguments: Sequence[ShellWord], found: Invocation) -> None:
    for word in arguments:
        if not word.literal:
            found.not_fixed_text("an argument of dd", word)
            return
        key, _, value = word.value.partition("=")
        if key in ("if", "of") and value:
            found.paths.append(("read" if key == "if" else "edit", ShellWord(value, True, value)))


# -- git ------------------------------------------------------------------------------------------------------

_GIT_GLOBAL_VALUES = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
)
# Subcommands that print what a path operand holds (in the work tree, the index or a commit).
_GIT_CONTENT_READERS = frozenset({"diff", "log", "show", "blame", "annotate", "whatchanged", "difftool"})
_GIT_READ_OPTIONS: Mapping[str, frozenset[str]] = {
    "blame": frozenset({"--contents", "--ignore-revs-file", "-S"}),
    "ls-files": frozenset({"--exclude-from", "-X", "--exclude-per-directory"}),
}


# Settings whose value git runs as a shell command.
_GIT_COMMAND_SETTINGS = re.compile(
    r"core\.(?:fsmonitor|pager|editor|sshcommand|askpass)|sequence\.editor|diff\.external|pager\..*|.*\.textconv"
    r"|filter\..*\.(?:clean|smudge|process)|gpg\.(?:.*\.)?program|uploadpack\.packobjectshook|.*\.cmd"
    r"|credential\.helper|core\.hookspath|include\.path|includeif\..*",
    re.IGNORECASE,
)


def _git_setting(setting: str, found: Invocation) -> None:
    """``git -c key=value``: a command it makes git run is judged as a script of its own."""
    key, _, value = setting.partition("=")
    if key.lower().startswith("alias."):
        if value.startswith("!"):
            found.scripts.append(value[1:])
    elif _GIT_COMMAND_SETTINGS.fullmatch(key):
        if (
            value
            and key.lower() not in ("core.hookspath", "include.path")
            and not key.lower().startswith("includeif")
        ):
            found.scripts.append(value.removeprefix("!"))
        else:
            found.problems.append(f"git -c {key} makes git run programs the command line does not show")


def _git(arguments: Sequence[ShellWord], found: Invocation) -> None:
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if not word.literal:
            found.not_fixed_text("an argument of git", word)
            return
        text = word.value
        if not text.startswith("-"):
            break
        index += 1
        name, equals, value = text.partition("=")
        if name in ("-C", "--git-dir", "--work-tree"):
            target = value if equals else (arguments[index].value if index < len(arguments) else "")
            if not equals:
                index += 1
            found.paths.append(("read", ShellWord(target, True, target)))
            if name == "-C":
                found.directories.append(ShellWord(target, True, target))
        elif name == "-c":
            setting = value if equals else (arguments[index].value if index < len(arguments) else "")
            index += 0 if equals else 1
            _git_setting(setting, found)
        elif name in _GIT_GLOBAL_VALUES and not equals:
            index += 1
    if index >= len(arguments):
        return
    subcommand = arguments[index].value
    rest = arguments[index + 1 :]
    reads = _GIT_READ_OPTIONS.get(subcommand, frozenset())
    no_index = any(word.literal and word.value == "--no-index" for word in rest)
    content = subcommand in _GIT_CONTENT_READERS
    pathspecs = False
    words = _Words(rest)
    for word in words.fixed("an argument of git", found):
        text = word.value
        if pathspecs or (text == "--" and not no_index):
            if pathspecs and content:
                found.repository_paths.append((word, True))
            pathspecs = True
            continue
        if content and not no_index and not text.startswith("-"):
            found.repository_paths.append((word, False))
        if subcommand in ("log", "whatchanged") and text.startswith("-L"):
            # `git log -L<range>:<file>` prints the history of part of a file.
            spec = text[2:] or (rest[words.index].value if words.index < len(rest) else "")
            words.index += 0 if text[2:] else 1
            inside = spec.rsplit(":", 1)[1] if ":" in spec else ""
            if inside:
                found.repository_paths.append((ShellWord(inside, True, inside), True))
            continue
        name, equals, value = text.partition("=")
        if (name.startswith("--") and len(name) >= 5 and "--output".startswith(name)) or (
            subcommand == "format-patch" and (name in ("-o", "--output-directory"))
        ):
            target = value if equals else (rest[words.index].value if words.index < len(rest) else "")
            words.index += 0 if equals else 1
            found.paths.append(("edit", ShellWord(target, True, target)))
        elif name in reads:
            target = value if equals else (rest[words.index].value if words.index < len(rest) else "")
            words.index += 0 if equals else 1
            found.paths.append(("read", ShellWord(target, True, target)))
        elif text.startswith("-O") and len(text) > 2 and subcommand in ("diff", "log", "show"):
            found.paths.append(("read", ShellWord(text[2:], True, text[2:])))
        elif no_index and not text.startswith("-"):
            found.paths.append(("read", word))
        elif subcommand in ("show", "diff") and ":" in text and not text.startswith("-"):
            # `git show REV:PATH` prints a file as committed: judged as reading that file.
            inside = text.split(":", 1)[1]
            if inside:
                found.paths.append(("read", ShellWord(inside, True, inside)))
