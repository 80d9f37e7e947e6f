"""Command lines read with a real bash grammar: every simple command, every redirection, and every part that could
not be analysed.

The parser is tree-sitter with its bash grammar (tree-sitter-bash), chosen over bashlex because it is maintained,
runs at C speed (a few microseconds a line), and is error tolerant: a line it cannot read yields a tree with explicit
ERROR and MISSING nodes instead of an exception or a guess, so "could not fully analyse" is a fact of the tree. It
reads comments, heredocs, substitutions and quoting the way bash does, so a comment cannot hide the line after it.

:func:`parse_command` flattens the tree into the simple commands a rule can judge, wherever they sit (pipelines,
lists, subshells, groups, function bodies, ``if``/``while``/``for``/``case`` bodies, ``$(...)``, backticks,
``<(...)``), with their words resolved where they are fixed text (``'git' st"at"us`` → ``git status``). What it
cannot resolve is reported in :attr:`CommandLine.problems`, and a caller must not allow a line that has any.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Literal

import tree_sitter_bash
from tree_sitter import Language
from tree_sitter import Node
from tree_sitter import Parser

from .shell_arithmetic import ARITHMETIC_VARIABLES
from .shell_arithmetic import expansion_problem
from .shell_arithmetic import literal_arithmetic
from .shell_arithmetic import literal_subscript

__all__ = [
    "MAX_COMMAND_LENGTH",
    "CommandLine",
    "ShellRedirect",
    "ShellWord",
    "SimpleCommand",
    "dangerous_variable",
    "parse_command",
]

MAX_COMMAND_LENGTH = 100_000
"""Longer command lines are not analysed at all (they are asked about)."""

_MAX_DEPTH = 60
"""How deeply constructs may nest before the rest is reported as a problem instead of analysed."""

RedirectAccess = Literal["read", "edit"]

_GLOB_CHARS = re.compile(r"[*?\[]")
_ODD_BLANKS = re.compile(r"[^\S \t\n]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
# Variables whose value changes which program runs or what a program runs, loads or trusts: by name, and by the
# suffixes tools use for search paths, option strings, config files, plugins and helper commands.
_DANGEROUS_VARIABLE = re.compile(
    r"(?:PATH|HOME|ENV|BASH_ENV|BASH_.*|SHELLOPTS|BASHOPTS|IFS|PS[0-9]|PROMPT_COMMAND|CDPATH|GLOBIGNORE|SHELL"
    r"|LD_.*|DYLD_.*|GIT_.*|XDG_.*|PYTHON.*|NODE_OPTIONS|NPM_CONFIG_.*|PERL.*|RUBY.*|JAVA_TOOL_OPTIONS"
    r"|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|EDITOR|VISUAL|PAGER|MANPAGER|LESS.*|SSH_.*|CARGO_.*|RUSTC.*|RUSTFLAGS"
    r"|GO(?:FLAGS|TOOLCHAIN|ENV|ROOT|PROXY|EXPERIMENT)|DOTNET_.*|MSBUILD.*|TMPDIR|BROWSER|TERMINFO.*|HISTFILE|INPUTRC|ZDOTDIR|FPATH|RIPGREP_.*|GREP_.*"
    r"|TAR_OPTIONS|PYTEST_.*|UV_.*|PIP_.*|CC|CXX|LDFLAGS|CFLAGS|MAKEFLAGS"
    r"|.*_(?:PATH|HOME|DIR|CONFIG|CONFIG_PATH|CONFIG_FILE|CONFIG_DIR|RC|OPTIONS|OPTS|ADDOPTS|FLAGS|PLUGINS"
    r"|PROGRAM|COMMAND|CMD|EDITOR|PAGER|SHELL|HOOK|HOOKS|PRELOAD|LIBRARY_PATH))",
    re.IGNORECASE,
)
_RESERVED_WORDS = frozenset(
    {
        "{",
        "}",
        "!",
        "if",
        "then",
        "elif",
        "else",
        "fi",
        "do",
        "done",
        "case",
        "esac",
        "while",
        "until",
        "for",
        "in",
        "select",
        "function",
        "[[",
        "]]",
        "coproc",
    }
)
_EXPANDING_NODES = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
_EXPANDING_TEXT = re.compile(r"[$`]|[<>]\(")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_ARITHMETIC_BODY = re.compile(r"\$?\(\((?P<paren>.*)\)\)|\$\[(?P<bracket>.*)\]", re.DOTALL)
_ARRAY_ELEMENT_KEY = re.compile(r"\[(?P<subscript>[^\]]*)\]\+?=")
# `declare`/`typeset`/`local` flags that make a later assignment or reference evaluate text as arithmetic (-i,
# integer) or as a variable name with a subscript (-n, nameref).
_ARITHMETIC_ATTRIBUTES = frozenset("in")
_ATTRIBUTE_KEYWORDS = frozenset({"declare", "typeset", "local"})
# Nodes that only group or separate commands: their children are walked, nothing else is judged.
_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "compound_statement",
        "subshell",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "do_group",
        "case_statement",
        "case_item",
        "function_definition",
        "variable_assignments",
    }
)
# Tokens a `word` node may hold without being text an argument carries.
_WORD_PARTS = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "ansi_c_string",
        "number",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "translated_string",
    }
)
_ANSI_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3}))")


@dataclass(frozen=True, slots=True)
class ShellWord:
    """One word of a command (a command name, an argument or a redirection target)."""

    value: str
    """What bash passes to the program when :attr:`literal`; otherwise the word as written."""
    literal: bool
    """Whether the value is fixed text: no expansion, substitution or brace expansion in it."""
    source: str
    """The word as written."""
    pattern: str | None = None
    """When the word holds wildcards bash expands (``*``, ``?``, ``[``) outside quotes: the word as a glob, with
    its quoted parts escaped. ``None`` for a word bash passes as it is."""
    substitution: bool = False
    """Whether the word is a process substitution (``<(...)``, ``>(...)``), which bash replaces by a pipe's path."""


@dataclass(frozen=True, slots=True)
class ShellRedirect:
    """A redirection to or from a file."""

    operator: str
    """As written: ``>``, ``>>``, ``<``, ``&>``, ``&>>``, ``>|``, ``>&``…"""
    access: RedirectAccess
    """Whether the target is read (``<``) or written."""
    target: ShellWord
    """The file."""


@dataclass(slots=True)
class SimpleCommand:
    """One simple command: a program (or builtin) and its arguments, as bash would run it."""

    words: list[ShellWord]
    """The command name and its arguments; empty for a line of assignments only."""
    assignments: list[tuple[str, ShellWord]] = field(default_factory=list[tuple[str, ShellWord]])
    """``NAME=value`` words before the command (or after ``export``/``declare``/``local``…)."""
    source: str = ""
    """The command as written (its assignments and arguments)."""
    input: Literal["pipe", "file", "heredoc"] | None = None
    """Where the command's standard input comes from, when not from the caller: a previous pipeline stage, a file
    redirection, or a heredoc/herestring."""
    foreign_arguments: bool = False
    """Whether the command gets more arguments at run time than it is written with (run by ``xargs``)."""

    @property
    def name(self) -> ShellWord | None:
        """The first word: the program or builtin it runs."""
        return self.words[0] if self.words else None

    def text(self) -> str:
        """The command as the rules see it: its words (values where fixed text, else as written), space-joined."""
        return " ".join(word.value for word in self.words)


@dataclass(slots=True)
class CommandLine:
    """A whole command line, flattened."""

    source: str
    """The line as given."""
    commands: list[SimpleCommand] = field(default_factory=list[SimpleCommand])
    """Every simple command, in the order they appear (substitutions before the command that holds them)."""
    redirects: list[ShellRedirect] = field(default_factory=list[ShellRedirect])
    """Every redirection to or from a file (descriptor duplications such as ``2>&1`` are left out)."""
    problems: list[str] = field(default_factory=list[str])
    """Why part of the line cannot be judged from its text; the line must not be allowed while there are any."""


def dangerous_variable(name: str) -> bool:
    """Whether setting the variable ``name`` can change which program runs or what a program loads or trusts."""
    return _DANGEROUS_VARIABLE.fullmatch(name) is not None


@functools.cache
def _language() -> Language:
    return Language(tree_sitter_bash.language())


_local = threading.local()


def _parser() -> Parser:
    # A parser holds state while it parses: one per thread, built on first use.
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = Parser(_language())
    return parser


def parse_command(command: str) -> CommandLine:
    """Read ``command`` as bash would and flatten it into simple commands, redirections and problems."""
    line = CommandLine(command)
    if len(command) > MAX_COMMAND_LENGTH:
        line.problems.append(f"the command is longer than {MAX_COMMAND_LENGTH:,} characters")
        return line
    if "\0" in command:
        line.problems.append("the command holds a NUL character, which no program can be given")
        return line
    if _ODD_BLANKS.search(command):
        # The grammar skips these as blanks; bash reads them as part of a word (`rm;\r#&rm` runs a second rm).
        line.problems.append("the command holds a blank other than space, tab and newline")
        return line
    try:
        data = command.encode()
    except UnicodeEncodeError:
        line.problems.append("the command holds text that is not valid Unicode")
        return line
    root = _parser().parse(data).root_node
    walker = _Walker(line, data)
    walker.walk(root, 0, None)
    if root.has_error and not any("could not read" in problem for problem in line.problems):
        line.problems.append("the shell parser could not read part of the command")
    walker.check_continuations(root)
    return line


class _Walker:
    def __init__(self, line: CommandLine, data: bytes) -> None:
        self.line = line
        self.data = data

    def problem(self, reason: str) -> None:
        if reason not in self.line.problems:
            self.line.problems.append(reason)

    def check_continuations(self, root: Node) -> None:
        # The grammar splits a word at a backslash-newline (`r\⏎m` reads as `r m`); bash joins it (`rm`).
        start = 0
        while (index := self.data.find(b"\\\n", start)) >= 0:
            start = index + 2
            # After a blank the continuation only joins two words' worth of blank; after a line break bash has
            # already ended the command, but the grammar carries it on to the next line.
            if index > 0 and self.data[index - 1 : index] in (b" ", b"\t"):
                continue
            node = root.descendant_for_byte_range(index, index + 1)
            while node is not None and node.type not in (
                "raw_string",
                "string",
                "heredoc_body",
                "comment",
                "ansi_c_string",
            ):
                node = node.parent
            if node is None:
                self.problem("a backslash-newline joins two parts of a word or two lines")
                return

    # -- statements ---------------------------------------------------------------------------------------------

    def walk(self, node: Node, depth: int, stdin: Literal["pipe", "file", "heredoc"] | None) -> None:
        if depth > _MAX_DEPTH:
            self.problem("the command nests too deeply to be analysed")
            return
        kind = node.type
        if node.is_missing:
            self.problem(f"the command is incomplete (a missing {kind!r})")
            return
        if kind == "ERROR":
            self.problem("the shell parser could not read part of the command")
            for child in node.named_children:
                self.walk(child, depth + 1, stdin)
            return
        if not node.is_named:
            return
        if kind == "command":
            self.command(node, depth, stdin)
        elif kind in _CONTAINERS:
            if kind == "compound_statement" and self.token(node.children[0]) == "((":
                self.arithmetic(node, depth)
                return
            for child in node.children:
                if child.type == "variable_assignment":
                    self.assignment_only(child, depth)
                else:
                    self.walk(child, depth + 1, stdin)
        elif kind == "pipeline":
            piped = False
            for child in node.children:
                if not child.is_named:
                    piped = piped or self.token(child) in ("|", "|&")
                    continue
                self.walk(child, depth + 1, "pipe" if piped else stdin)
        elif kind == "redirected_statement":
            self.redirected(node, depth, stdin)
        elif kind in ("for_statement", "c_style_for_statement"):
            self.loop(node, depth, stdin)
        elif kind == "variable_assignment":
            self.assignment_only(node, depth)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, depth)
        elif kind == "test_command":
            self.test(node, depth)
        elif kind == "comment":
            text = self.text(node)
            if any(quote in text for quote in "'\"`"):
                self.problem("a comment holds a quote character, which may hide a command from a reader")
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node, depth, None)
        elif kind in _WORD_PARTS:
            self.word(node, depth)
        else:
            self.problem(f"the command uses a construct that cannot be analysed ({kind})")

    def command(
        self,
        node: Node,
        depth: int,
        stdin: Literal["pipe", "file", "heredoc"] | None,
        extra: list[ShellWord] | None = None,
    ) -> SimpleCommand:
        command = SimpleCommand([], source=self.text(node), input=stdin)
        index = len(self.line.commands)
        trailing: list[ShellWord] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name, value = self.assignment(child, depth)
                command.assignments.append((name, value))
            elif kind == "command_name":
                for part in child.named_children:
                    command.words.append(self.word(part, depth))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                trailing.extend(self.redirect(child, depth, command))
            elif kind == "comment":
                self.walk(child, depth + 1, None)
            elif child.is_named:
                command.words.append(self.word(child, depth))
            elif self.token(child) in ("$", '$"'):
                self.problem('the command uses a $"..." translated string, which cannot be analysed')
        command.words.extend(trailing)
        if extra:
            command.words.extend(extra)
        if command.words and command.words[0].source in _RESERVED_WORDS:
            # Bash would read the structure the word opens; the grammar took it for a program's name.
            self.problem(f"the parser read the reserved word {command.words[0].source!r} as a command name")
        for name, _ in command.assignments:
            self.check_variable(name, command.words)
        # Substitutions inside the words were appended while resolving them; the command itself goes before them
        # in the list so its own verdict comes first, which reads better in a reason.
        self.line.commands.insert(index, command)
        return command

    def redirected(self, node: Node, depth: int, stdin: Literal["pipe", "file", "heredoc"] | None) -> None:
        body: Node | None = None
        redirects: list[Node] = []
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "body":
                body = child
            elif child.is_named:
                redirects.append(child)
        extra: list[ShellWord] = []
        stdin_here = stdin
        for child in redirects:
            if child.type == "file_redirect" and self.redirect_operator(child) in ("<", "<&"):
                stdin_here = "file"
            elif child.type in ("heredoc_redirect", "herestring_redirect"):
                stdin_here = "heredoc"
        holder: SimpleCommand | None = None
        if body is not None and body.type == "command":
            holder = self.command(body, depth + 1, stdin_here)
        elif body is not None:
            self.walk(body, depth + 1, stdin_here)
        for child in redirects:
            extra.extend(self.redirect(child, depth, holder))
        if extra:
            if holder is None:
                self.problem("words after a redirection of a compound command cannot be analysed")
            else:
                holder.words.extend(extra)

    def loop(self, node: Node, depth: int, stdin: Literal["pipe", "file", "heredoc"] | None) -> None:
        if node.type == "c_style_for_statement":
            self.problem("arithmetic for-loops are not analysed")
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if field_name == "variable":
                if self.text(child) in ARITHMETIC_VARIABLES:
                    self.problem(f"a loop assigning {self.text(child)} evaluates each value as arithmetic")
                continue
            if field_name == "value":
                self.word(child, depth)
            else:
                self.walk(child, depth + 1, stdin)

    def assignment_only(self, node: Node, depth: int) -> None:
        name, value = self.assignment(node, depth)
        self.check_variable(name, [])
        self.line.commands.append(SimpleCommand([], [(name, value)], source=self.text(node)))

    def assignment(self, node: Node, depth: int) -> tuple[str, ShellWord]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type != "variable_name":
            base, bracket, subscript = name.partition("[")
            if name_node.type != "subscript" or not bracket or not literal_subscript(subscript[:-1]):
                self.problem("an assignment to an array element can run code hidden in its subscript")
                for part in name_node.named_children:
                    self.walk(part, depth + 1, None)
            name = base
        if value_node is None:
            return name, ShellWord("", True, "")
        if value_node.type == "array":
            for part in value_node.named_children:
                element = self.text(part)
                key = _ARRAY_ELEMENT_KEY.match(element)
                if element.startswith("[") and (key is None or not literal_subscript(key["subscript"])):
                    self.problem(
                        "an array element's subscript is evaluated as arithmetic, which can run code"
                    )
                self.word(part, depth)
            return name, ShellWord(self.text(value_node), False, self.text(value_node))
        value = self.word(value_node, depth)
        if name in ARITHMETIC_VARIABLES and not (value.literal and literal_arithmetic(value.value)):
            self.problem(f"an assignment to {name} is evaluated as arithmetic, which can run code")
        return name, value

    def check_variable(self, name: str, words: list[ShellWord]) -> None:
        if dangerous_variable(name):
            where = f"for {words[0].value!r}" if words else "for the commands after it"
            self.problem(f"the command sets {name}, which changes what programs run or load, {where}")

    def declaration(self, node: Node, depth: int) -> None:
        keyword = self.token(node.children[0])
        command = SimpleCommand([ShellWord(keyword, True, keyword)], source=self.text(node))
        index = len(self.line.commands)
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                name, value = self.assignment(child, depth)
                command.assignments.append((name, value))
                command.words.append(ShellWord(f"{name}={value.value}", value.literal, self.text(child)))
            elif child.is_named:
                word = self.word(child, depth)
                command.words.append(word)
                if not word.literal or "[" in word.value:
                    self.problem(f"{keyword} names a variable that cannot be analysed ({word.source!r})")
                elif (
                    keyword in _ATTRIBUTE_KEYWORDS
                    and word.value.startswith(("-", "+"))
                    and _ARITHMETIC_ATTRIBUTES.intersection(word.value[1:])
                ):
                    self.problem(
                        f"{keyword} {word.value} makes later assignments or references evaluate text as "
                        "arithmetic or as a variable name, which can run code"
                    )
                elif keyword != "unset" and not word.value.startswith(("-", "+")):
                    self.check_variable(word.value, [])
        for name, _ in command.assignments:
            self.check_variable(name, [])
        self.line.commands.insert(index, command)

    def test(self, node: Node, depth: int) -> None:
        double = self.token(node.children[0]) == "[["
        for descendant in self.descendants(node, depth):
            if descendant.type == "test_operator":
                operator = self.text(descendant)
                if operator == "-v" or (double and operator in _ARITHMETIC_TESTS):
                    self.problem(f"a test with {operator} evaluates text as arithmetic, which can run code")
        for child in node.named_children:
            self.walk_words(child, depth + 1)

    def walk_words(self, node: Node, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.problem("the command nests too deeply to be analysed")
            return
        if node.type in _WORD_PARTS:
            self.word(node, depth)
            return
        for child in node.named_children:
            self.walk_words(child, depth + 1)

    def arithmetic(self, node: Node, depth: int) -> None:
        body = _ARITHMETIC_BODY.fullmatch(self.text(node))
        if body is None or not literal_arithmetic(
            body["paren"] if body["paren"] is not None else body["bracket"]
        ):
            self.problem("arithmetic on a variable can run code hidden in the variable's value")
        for descendant in self.descendants(node, depth):
            if descendant.type in ("command_substitution", "process_substitution"):
                self.problem("arithmetic holding a substitution cannot be analysed")
                self.walk_substitution(descendant, depth + 1)

    # -- redirections -------------------------------------------------------------------------------------------

    def redirect_operator(self, node: Node) -> str:
        for child in node.children:
            if not child.is_named:
                return self.token(child)
        return ""

    def redirect(self, node: Node, depth: int, holder: SimpleCommand | None) -> list[ShellWord]:
        """Record a redirection; return the words after its target, which are the command's arguments."""
        kind = node.type
        if kind == "heredoc_redirect":
            self.heredoc(node, depth, holder)
            return []
        if kind == "herestring_redirect":
            if holder is not None:
                holder.input = "heredoc"
            for child in node.named_children:
                self.word(child, depth)
            return []
        operator = self.redirect_operator(node)
        destinations = [
            child
            for index, child in enumerate(node.children)
            if node.field_name_for_child(index) == "destination"
        ]
        if holder is not None and operator in ("<", "<&"):
            holder.input = "file"
        if not destinations:
            if operator not in (">&-", "<&-"):
                self.problem(f"a redirection ({self.text(node)!r}) cannot be analysed")
            return []
        target = self.word(destinations[0], depth)
        extra = [self.word(child, depth) for child in destinations[1:]]
        if operator in (">&", "<&") and (target.value.isdigit() or target.value == "-") and target.literal:
            return extra
        if operator in ("<&", ">&") and not target.literal:
            self.problem(f"the redirection {self.text(node)!r} cannot be analysed")
            return extra
        access: RedirectAccess = "read" if operator in ("<", "<&") else "edit"
        if operator == "<>":
            access = "edit"
        self.line.redirects.append(ShellRedirect(operator, access, target))
        return extra

    def heredoc(self, node: Node, depth: int, holder: SimpleCommand | None) -> None:
        if holder is not None:
            holder.input = "heredoc"
        for child in node.named_children:
            if child.type == "heredoc_body":
                for part in child.named_children:
                    if part.type != "heredoc_content" and part.type != "simple_expansion":
                        self.problem("a heredoc expands a substitution, which cannot be analysed")
                        self.walk_substitution(part, depth + 1)
            elif child.type in ("heredoc_start", "heredoc_end"):
                continue
            elif child.type == "file_redirect":
                self.redirect(child, depth, holder)
            else:
                self.walk(child, depth + 1, None)

    # -- words --------------------------------------------------------------------------------------------------

    def walk_substitution(self, node: Node, depth: int) -> None:
        if node.type == "command_substitution" and self.data.startswith(b"$((", node.start_byte):
            # Bash reads `$((` as arithmetic when it can; the grammar, inside `${...}`, as a subshell.
            self.problem("a $(( substitution may be arithmetic on a variable, which can run code")
        if node.type in ("command_substitution", "process_substitution"):
            for child in node.children:
                self.walk(child, depth + 1, None)
        else:
            for child in node.named_children:
                self.walk_substitution(child, depth + 1)

    def word(self, node: Node, depth: int) -> ShellWord:
        if depth > _MAX_DEPTH:
            self.problem("the command nests too deeply to be analysed")
            return ShellWord(self.text(node), False, self.text(node))
        parts = list(self.parts(node, depth + 1, top=True))
        source = self.text(node)
        literal = all(part is not None for part in parts)
        if not literal:
            return ShellWord(source, False, source, substitution=node.type == "process_substitution")
        value = "".join(text for text, _ in (part for part in parts if part is not None))
        unquoted = "".join(
            text for text, quoted in (part for part in parts if part is not None) if not quoted
        )
        if _BRACE_EXPANSION.search(unquoted):
            return ShellWord(source, False, source)
        pattern: str | None = None
        if _GLOB_CHARS.search(unquoted):
            pattern = "".join(
                glob.escape(text) if quoted else text for text, quoted in (p for p in parts if p is not None)
            )
        if unquoted.startswith("~") and parts and parts[0] is not None and not parts[0][1]:
            expanded = _expand_tilde(value)
            if expanded is None:
                return ShellWord(source, False, source)
            value = expanded
            if pattern is not None:
                pattern = _expand_tilde(pattern) or pattern
        return ShellWord(value, True, source, pattern)

    def parts(self, node: Node, depth: int, *, top: bool = False) -> Iterator[tuple[str, bool] | None]:
        """The pieces of a word as (text, quoted), or ``None`` for a piece that is not fixed text."""
        kind = node.type
        if depth > _MAX_DEPTH:
            self.problem("the command nests too deeply to be analysed")
            yield None
        elif kind == "word":
            text = self.text(node)
            if "\n" in text.replace("\\\n", ""):
                # The grammar glues `\cmd` on the next line to the word before; bash runs it as a command.
                self.problem("the parser read a line break inside a word, which bash would not")
                yield None
                return
            yield from _word_pieces(text)
        elif kind in ("number", "variable_name"):
            yield self.text(node), False
        elif kind == "raw_string":
            yield self.text(node)[1:-1], True
        elif kind == "ansi_c_string":
            decoded = _decode_ansi_c(self.text(node)[2:-1])
            if decoded is None:
                self.problem(f"the ANSI-C string {self.text(node)[:40]!r} cannot be decoded safely")
            yield (decoded, True) if decoded is not None else None
        elif kind == "string":
            for child in node.children:
                if child.type == "string_content":
                    yield _unescape_double(self.text(child)), True
                elif child.is_named:
                    yield from self.parts(child, depth + 1)
        elif kind == "concatenation":
            for child in node.children:
                if child.is_named:
                    yield from self.parts(child, depth + 1)
                else:
                    yield self.text(child), False
        elif kind in ("command_substitution", "process_substitution"):
            self.walk_substitution(node, depth)
            yield None
        elif kind == "arithmetic_expansion":
            self.arithmetic(node, depth)
            yield None
        elif kind == "expansion":
            if "@P" in self.text(node).replace(" ", ""):
                self.problem("a ${...@P} expansion runs the substitutions inside a variable's value")
            arithmetic = expansion_problem(self.text(node))
            if arithmetic is not None:
                self.problem(arithmetic)
            self.hidden_substitutions(node, depth)
            for child in node.named_children:
                self.walk_words(child, depth + 1)
            yield None
        elif kind in ("simple_expansion", "brace_expression", "translated_string"):
            yield None
        else:
            if not top or kind not in _WORD_PARTS:
                self.problem(f"the command uses a construct that cannot be analysed ({kind})")
            yield None

    def hidden_substitutions(self, node: Node, depth: int) -> None:
        """Report text in the expansion ``node`` that bash expands but the grammar read as plain text: it parses
        the pattern of ``${x#$(cmd)}`` or ``${x/`cmd`/y}``, and ``$[...]`` anywhere inside, as a bare word."""
        stack = [(child, depth + 1) for child in node.named_children]
        while stack:
            current, level = stack.pop()
            if current.type in _EXPANDING_NODES:
                continue  # walked, and judged, as a word part
            if current.named_child_count == 0:
                if _EXPANDING_TEXT.search(self.text(current)):
                    self.problem(
                        f"the expansion {self.text(node)[:40]!r} holds an expansion the parser reads as text"
                    )
                    return
                continue
            if level >= _MAX_DEPTH:
                self.problem("the command nests too deeply to be analysed")
                return
            stack.extend((child, level + 1) for child in current.named_children)

    def descendants(self, node: Node, depth: int) -> Iterator[Node]:
        """``node`` and everything under it, depth first; past the nesting limit, a problem instead."""
        stack = [(node, depth)]
        while stack:
            current, level = stack.pop()
            yield current
            if current.named_child_count and level >= _MAX_DEPTH:
                self.problem("the command nests too deeply to be analysed")
                continue
            stack.extend((child, level + 1) for child in current.named_children)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode(errors="replace")

    def token(self, node: Node) -> str:
        return node.type if not node.is_named else self.text(node)


def _word_pieces(text: str) -> Iterator[tuple[str, bool]]:
    """An unquoted word's text as (text, quoted) pieces: a backslash quotes the character after it (``\\*``)."""
    if "\\" not in text:
        yield text, False
        return
    for plain, escaped in re.findall(r"([^\\]+)|\\(.?)", text.replace("\\\n", ""), flags=re.DOTALL):
        yield (plain, False) if plain else (escaped, True)


def _unescape_double(text: str) -> str:
    """Text inside double quotes: a backslash escapes only ``$``, `````, ``"``, ``\\`` and a newline."""
    if "\\" not in text:
        return text
    return re.sub(r"\\([$`\"\\\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _decode_ansi_c(body: str) -> str | None:
    """The text of a ``$'...'`` string, or ``None`` when it holds an escape this decoder does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        following = body[i + 1 : i + 2]
        if following in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[following])
            i += 2
            continue
        match = _ANSI_NUMERIC.match(body, i)
        if match is None:
            return None
        hex_byte, short, long, octal = match.groups()
        code = int(hex_byte, 16) if hex_byte else int(short or long, 16) if (short or long) else int(octal, 8)
        if code == 0 or code > 0x10FFFF:
            return None  # bash cuts the string at a NUL; past the Unicode range it is not text
        out.append(chr(code))
        i = match.end()
    return "".join(out)


def _expand_tilde(value: str) -> str | None:
    """``~`` and ``~/x`` as the home directory; ``~user/x`` as that user's; ``None`` when it cannot be told."""
    head = value.split("/", 1)[0]
    if head in ("~+", "~-") or not re.fullmatch(r"~[A-Za-z0-9._-]*", head):
        return None
    expanded = os.path.expanduser(value)
    return None if expanded.startswith("~") else expanded
