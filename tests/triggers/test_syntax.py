"""The condition language's parser and printer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from triggers.syntax import (
    MAX_DEPTH,
    MAX_LENGTH,
    And,
    Call,
    Compare,
    ConditionError,
    Duration,
    Expr,
    Name,
    Not,
    Number,
    Or,
    String,
    parse,
    render,
)


def test_seed_condition_parses_with_upper_case_keywords() -> None:
    """The seed's ``AND`` is a keyword like ``and``."""
    assert parse("time_elapsed > 30min AND phase1_tests_not_pass") == And(
        (Compare(">", Name("time_elapsed"), Duration(1800.0)), Name("phase1_tests_not_pass"))
    )


def test_lower_case_form_parses() -> None:
    """``elapsed > 30m and not tests_pass(phase1)`` parses to calls and negation."""
    assert parse("elapsed > 30m and not tests_pass(phase1)") == And(
        (
            Compare(">", Name("elapsed"), Duration(1800.0)),
            Not(Call("tests_pass", (Name("phase1"),))),
        )
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("30s", 30.0),
        ("5m", 300.0),
        ("30min", 1800.0),
        ("2h", 7200.0),
        ("1.5H", 5400.0),
    ],
)
def test_duration_units(text: str, seconds: float) -> None:
    """Every documented unit reads as seconds, case-insensitively."""
    assert parse(f"idle > {text}") == Compare(">", Name("idle"), Duration(seconds))


def test_and_binds_tighter_than_or() -> None:
    """``a or b and c`` is ``a or (b and c)``."""
    assert parse("a or b and c") == Or((Name("a"), And((Name("b"), Name("c")))))


def test_parentheses_group() -> None:
    """Parentheses override precedence."""
    assert parse("(a or b) and c") == And((Or((Name("a"), Name("b"))), Name("c")))


def test_not_applies_to_comparison() -> None:
    """``not x > 1`` negates the comparison."""
    assert parse("not commits > 1") == Not(Compare(">", Name("commits"), Number(1.0)))


def test_string_arguments_and_escapes() -> None:
    """Quoted strings take either quote and backslash escapes."""
    assert parse(r"""file_exists("a\"b") or file_exists('c\'d')""") == Or(
        (Call("file_exists", (String('a"b'),)), Call("file_exists", (String("c'd"),)))
    )


def test_call_with_no_arguments() -> None:
    """``name()`` parses as a call with no arguments (typing rejects it later)."""
    assert parse("always()") == Call("always", ())


def test_columns_are_recorded() -> None:
    """Nodes keep their 1-based column for error messages."""
    expr = parse("a and  tests_pass(p)")
    assert isinstance(expr, And)
    assert [op.col for op in expr.operands] == [1, 8]


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("", 1, "empty"),
        ("a and", 6, "expected a name"),
        ("tests_pass(phase1", 18, "expected ',' or ')'"),
        ("(a or b", 8, "expected ')'"),
        ("a b", 3, "expected 'and', 'or'"),
        ("a = b", 3, "'=' is not an operator"),
        ("a && b", 3, "write 'and', 'or' or 'not'"),
        ("idle > 5 minutes", 10, "expected 'and', 'or'"),
        ("time_elapsed > 20 s", 16, "a duration is written without a space: 20s, not '20 s'"),
        ("idle > 5  Min and always", 8, "without a space: 5Min, not '5  Min'"),
        ("idle > 5parsecs", 9, "unknown unit 'parsecs'"),
        ('file_exists("x)', 13, "never closed"),
        ('file_exists("\\q")', 14, "unknown escape"),
        ("a # b", 3, "unexpected character '#'"),
        ("f(1)", 3, "a name or a quoted string"),
        ("a >", 4, "expected a name, a number"),
    ],
)
def test_errors_name_column_and_expectation(text: str, column: int, fragment: str) -> None:
    """A parse error says where (column) and what was expected."""
    with pytest.raises(ConditionError) as caught:
        parse(text)
    assert caught.value.column == column
    assert fragment in caught.value.message
    assert str(caught.value).startswith(f"column {column}: ")


def test_length_limit() -> None:
    """Conditions longer than the limit are refused before parsing."""
    with pytest.raises(ConditionError, match="longer than"):
        parse("a or " * (MAX_LENGTH // 5) + "a")


def test_depth_limit_on_parentheses() -> None:
    """Deep nesting is refused, not a recursion error."""
    with pytest.raises(ConditionError, match="nested deeper"):
        parse("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))


def test_depth_limit_on_not() -> None:
    """A long chain of ``not`` counts as nesting too."""
    with pytest.raises(ConditionError, match="nested deeper"):
        parse("not " * (MAX_DEPTH + 1) + "a")


def test_depth_at_limit_is_fine() -> None:
    """Exactly the limit still parses."""
    assert parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH) == Name("a")


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("A AND B", "A and B"),
        ("(a and b) and c", "(a and b) and c"),
        ("a and (b or c)", "a and (b or c)"),
        ("(a or b) or c", "(a or b) or c"),
        ("not (a and b)", "not (a and b)"),
        ("not not a", "not not a"),
        ("idle > 90s", "idle > 90s"),
        ("idle > 0.25s", "idle > 250ms"),
        ("commits >= 2.5", "commits >= 2.5"),
        ("(a > b) > c", "(a > b) > c"),
        ("f('x\ty')", 'f("x\\ty")'),
    ],
)
def test_render_is_canonical(text: str, printed: str) -> None:
    """Rendering lower-cases keywords, keeps needed parentheses and picks exact units."""
    assert render(parse(text)) == printed


# --- properties ------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda s: s not in ("and", "or", "not"))
LEAVES: st.SearchStrategy[Expr] = st.one_of(
    NAMES.map(Name),
    st.integers(0, 10**6).map(lambda n: Number(float(n))),
    st.decimals(0, 10**4, places=3, allow_nan=False).map(lambda d: Number(float(d))),
    st.integers(0, 10**7).map(lambda ms: Duration(ms / 1000)),
    st.builds(
        Call,
        NAMES,
        st.lists(st.one_of(NAMES.map(Name), st.text(max_size=5).map(String)), max_size=3).map(tuple),
    ),
)


def _trees(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    many = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        children.map(Not),
        many.map(And),
        many.map(Or),
        st.builds(Compare, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), children, children),
    )


TREES = st.recursive(LEAVES, _trees, max_leaves=12)


@given(TREES)
def test_parse_render_parse_is_stable(expr: Expr) -> None:
    """Printing a tree and parsing it back gives the same tree, and prints the same again."""
    text = render(expr)
    again = parse(text)
    assert again == expr
    assert render(again) == text


@given(st.text(alphabet=st.sampled_from(list("ab()<>=!&|'\"\\ 09.msnotrdf,_")), max_size=40))
def test_parser_never_raises_anything_but_condition_error(text: str) -> None:
    """Arbitrary input gives a tree or a ConditionError, never another exception."""
    try:
        parse(text)
    except ConditionError as error:
        column = error.column
    else:
        return
    assert 1 <= column <= len(text) + 1
