"""Arithmetic contexts: bash evaluates a variable's value there as an expression, and a subscript in it as a command
line, so ``x='a[$(touch M)]'; echo ${b[x]}`` runs ``touch`` although no substitution shows.

Each variant is first run by real bash with a marker, to prove it runs the hidden command; then judged under rules
that allow every command, so only the analysis can stop it: it must be asked about. Literal arithmetic stays
allowed. A property test generates more contexts, each wrapping a name or a substitution.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from permissions_harness import rule

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules

ALLOW_ALL = PermissionRules(
    bash=(rule("*", "allow"),),
    read=(rule("**/*", "allow"),),
    edit=(rule("**/*", "allow"),),
    external_directory=(rule("**", "allow"),),
    default_action="allow",
)

PLANT = "x='a[$(touch M)]'; b=(1 2 3); s=abcdef; "
"""Sets ``x`` to a value that runs ``touch M`` when bash evaluates it as arithmetic (the attacker's part)."""

VARIANTS = [
    "echo ${b[x]}",
    'echo "${b[x]}"',
    "echo ${b[$x]}",
    "echo ${#b[x]}",
    "echo ${!x}",
    "echo ${s:x}",
    "echo ${s:0:x}",
    "echo ${b[@]:1:x}",
    "set -- 1 2; echo ${@:x}",
    "echo ${b[x]:-1}",
    "echo ${y:-${b[x]}}",
    "echo ${x#${b[x]}}",
    "echo ${x/${b[x]}/y}",
    "head -n ${b[x]}0 /dev/null",
    "cat <<< ${b[x]}",
    "case 1 in ${b[x]}) ;; esac",
    "for i in ${b[x]}; do :; done",
    "echo $((x))",
    "echo $(( $x ))",
    "echo $[x]",
    "unset y; echo ${y:-$((x))}",
    "((x))",
    "[[ x -eq 1 ]]",
    "[[ $x -lt 1 ]]",
    "[[ -n ${b[x]} ]]",
    "[[ -v b[x] ]]",
    "test -v 'b[x]'",
    "command test -v 'b[x]'",
    "b[x]=1",
    "y=([x]=1)",
    "b+=([x]=1)",
    "declare -a y=([x]=1)",
    "declare -i n=x",
    "declare -i n; n=x",
    "typeset -i n=x",
    "f() { local -i n=x; }; f",
    "declare -n r='b[x]'; echo $r",
    "command declare -i n=x",
    "builtin typeset -i n=x",
    "RANDOM=x",
    "OPTIND=$x",
    "export OPTIND=x",
    "command export OPTIND=x",
    "read 'b[x]' <<< 1",
    "printf -v 'b[x]' 1",
    "unset 'b[x]'",
    "builtin unset 'b[x]'",
    "let x",
    'for OPTIND in "$x"; do true; done',
    "select RANDOM in x; do break; done <<< 1",
    "RANDOM+=x",
    "builtin let x",
]
"""Every one of these runs the hidden ``touch`` in bash 5 (checked below)."""

LITERAL = [
    "echo ${b[0]} ${b[-1]} ${b[@]} ${#b[*]}",
    "echo ${s:1:2} ${s: -1} ${s:(-2)}",
    "echo $((1+2)) $(( (1+2)*3 )) $((0x1f)) $((2#101)) $((1?2:3))",
    "echo ${x:-default} ${x%%.*} ${x##*/} ${x^^} ${x/a/b} ${x:-$HOME}",
    "b[0]=1",
    "y=([0]=1 [1]=2)",
    "RANDOM=5",
    "declare -a y",
    "declare -r y=1",
]
"""Arithmetic with no name or expansion in it: judged from the text, so allowed."""

# Builtins that read a number without evaluating it as arithmetic (checked below): no need to ask about them.
NOT_ARITHMETIC = [
    "shift x",
    "f() { return x; }; f",
    "read -t x y < /dev/null",
    "read -n x y < /dev/null",
    "ulimit -t x",
    "printf '%d' x",
    "[ x -eq 1 ]",
    "test x -eq 1",
    "for i in 1; do break x; done",
    "sleep 0 & wait x",
    "kill -l x",
]

bash = shutil.which("bash")
needs_bash = pytest.mark.skipif(bash is None, reason="bash is not installed")


def _runs_hidden_command(line: str, where: Path) -> bool:
    marker = where / "M"
    marker.unlink(missing_ok=True)
    assert bash is not None
    subprocess.run([bash, "-c", line], cwd=where, capture_output=True, timeout=30, check=False)
    return marker.exists()


@needs_bash
@pytest.mark.parametrize("variant", VARIANTS)
def test_bash_runs_the_hidden_command_and_the_judge_asks(variant: str, project: Path) -> None:
    assert _runs_hidden_command(PLANT + variant, project), f"bash did not run the hidden command: {variant}"
    policy = PermissionPolicy(ALLOW_ALL, project)
    for line in (PLANT + variant, variant):
        verdict = policy.evaluate("execute_command", {"command": line})
        assert verdict.action == "ask", (line, verdict)


@needs_bash
@pytest.mark.parametrize("variant", NOT_ARITHMETIC)
def test_builtins_that_read_numbers_do_not_evaluate_them(variant: str, project: Path) -> None:
    assert not _runs_hidden_command(PLANT + variant, project), variant


@pytest.mark.parametrize("line", LITERAL)
def test_literal_arithmetic_stays_analysable(line: str, project: Path) -> None:
    verdict = PermissionPolicy(ALLOW_ALL, project).evaluate("execute_command", {"command": line})
    assert verdict.action == "allow", (line, verdict)


def test_the_issue_example_is_asked_under_the_default_rules(project: Path) -> None:
    policy = PermissionPolicy(PermissionRules.default(), project)
    verdict = policy.evaluate("execute_command", {"command": "x='a[$(id>&2)]'; echo ${b[x]}"})
    assert verdict.action == "ask"
    assert "subscript" in verdict.reason


# -- property: a generated arithmetic context holding a name or a substitution is never allowed ---------------

CONTEXTS = [
    "echo ${{b[{e}]}}",
    'echo "${{b[{e}]}}"',
    "echo ${{#b[{e}]}}",
    "echo ${{s:{e}}}",
    "echo ${{s:1:{e}}}",
    "echo ${{b[@]:{e}}}",
    "echo $(({e}))",
    'echo "$(( {e} ))"',
    "echo $[{e}]",
    "(( {e} ))",
    "[[ {e} -eq 1 ]]",
    "[[ 1 -ne {e} ]]",
    "b[{e}]=1",
    "y=([{e}]=1)",
    "RANDOM='{e}'",
    "head -n ${{b[{e}]}}0 README",
    "echo ${{x:-${{b[{e}]}}}}",
    "echo ${{x#${{b[{e}]}}}}",
    "let '{e}'",
    "declare -i n='{e}'",
]
HARMFUL = ["x", "y_1", "$x", "${x}", "a[$(touch M)]", "$(touch M)", "`touch M`", "b[x]", "RANDOM"]
LITERALS = ["", "1", "0x1f", "2#10", "(3)"]
OPERATORS = ["+", "-", "*", "<<", "?1:", ",", "&&"]
WRAPPERS = [
    "LINE; ls",
    "ls && LINE",
    "if true; then LINE; fi",
    "( LINE )",
    "{ LINE; }",
    "echo $(LINE)",
    "f() { LINE; }",
]


@st.composite
def _arithmetic_lines(draw: st.DrawFn) -> str:
    harmful = draw(st.sampled_from(HARMFUL))
    before = draw(st.sampled_from(LITERALS))
    after = draw(st.sampled_from(LITERALS))
    expression = harmful
    if before:
        expression = before + draw(st.sampled_from(OPERATORS)) + expression
    if after:
        expression = expression + draw(st.sampled_from(OPERATORS)) + after
    line = draw(st.sampled_from(CONTEXTS)).format(e=expression)
    for _ in range(draw(st.integers(0, 2))):
        line = draw(st.sampled_from(WRAPPERS)).replace("LINE", line)
    return line


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=_arithmetic_lines())
def test_an_arithmetic_context_with_a_name_or_a_substitution_is_never_allowed(
    line: str, project: Path
) -> None:
    verdict = PermissionPolicy(ALLOW_ALL, project).evaluate("execute_command", {"command": line})
    assert verdict.action != "allow", (line, verdict)
