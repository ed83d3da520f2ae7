"""Process isolation: hidden tests that reach the workspace's code in another process.

Real parts throughout: a challenge with ``testing: isolation: process``, real pytest runs of
its hidden tests through the runner, the workspace host in its sandbox, warm and cold, and in
the weaker sandboxes. Honest code must behave as it would in-process (types, exceptions,
protocols, callbacks, changed arguments); a host that dies, hangs or talks nonsense must fail
the tests waiting on it, never the run.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.model import Challenge
from orchestrator.grading import isolation, testrun
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

BUBBLEWRAP = detect_sandbox().kind == "bubblewrap"
needs_bubblewrap = pytest.mark.skipif(
    not BUBBLEWRAP, reason=f"LOUD SKIP: needs bubblewrap ({detect_sandbox().reason}); .ci/run installs it"
)

CHALLENGE = """\
challenge:
  id: isolation-probe
  initial_briefing: |
    Write app.py.
  phases:
    - id: phase1
  testing:
    isolation: process
  limits:
    test_run: {test_run}
"""

#: The agent's code: honest, with a bit of everything tests meet.
HONEST = """\
import enum, os, sys


class Base:
    pass


class Token(Base):
    def __init__(self, text):
        self.text = text

    def upper(self):
        return self.text.upper()


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class NotFound(KeyError):
    def __init__(self, key):
        super().__init__(key)
        self.key = key


class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, item):
        return item in self.items

    def __getitem__(self, index):
        return self.items[index]

    def __str__(self):
        return f"Bag({len(self.items)})"


class Resource:
    closed = 0

    def __enter__(self):
        self.open = True
        return self

    def __exit__(self, *exc):
        type(self).closed += 1
        return False

    @classmethod
    def closed_count(cls):
        return cls.closed


def where():
    me = (os.getpid(), os.readlink("/proc/self/ns/pid"))
    told = os.environ.get("PYTEST_CURRENT_TEST")
    return me, sorted(name for name in sys.modules if name.startswith("test_")), told


def echo(value):
    return value


def double(value):
    return value * 2


def make_token(text):
    return Token(text)


def color(name):
    return Color(name)


def fail_value():
    raise ValueError("bad value")


def find(key):
    raise NotFound(key)


def count(n):
    yield from range(n)


def append_to(items, item):
    items.append(item)


def read_only(record):
    return sorted(record)


def apply(function, value):
    return function(value)


def store(repository, item):
    return repository.save(item)


def write_to(buffer, text):
    buffer.write(text)


def require_aware(value):
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value


def swallow(function, value):
    try:
        function(value)
    except BaseException:
        return "swallowed"
"""

#: Hidden tests that check the honest code behaves as it would in-process.
SEMANTICS = '''\
"""Isolated hidden tests of the honest app."""

import datetime
import io
import os
import sys

import pytest

import app
from app import Color, NotFound, Token


class Repository:
    """A double of the tests' own, handed to the agent's code."""

    def __init__(self):
        self.saved = []

    def save(self, item):
        self.saved.append(item)
        return len(self.saved)


class NoOffset(datetime.tzinfo):
    def utcoffset(self, dt):
        return None


def test_the_workspace_runs_in_another_process():
    there, tests_there, told = app.where()
    assert there != (os.getpid(), os.readlink("/proc/self/ns/pid")) and tests_there == []
    assert told is None  # no effects watched: the host is not told which test runs
    assert type(app).__name__ == "RemoteModule"
    here = os.path.realpath(os.getcwd())
    local = [
        name
        for name, module in list(sys.modules.items())
        if not isinstance(module, type(app)) and str(getattr(module, "__file__", "") or "").startswith(here)
    ]
    assert local == []


def test_plain_values_are_real_values():
    assert app.double(21) == 42 and type(app.double(21)) is int
    value = {"a": [1, (2, 3.5)], "b": {4}, "c": b"x", "d": None}
    assert app.echo(value) == value
    moment = datetime.datetime(2026, 11, 8, 0, 15, tzinfo=datetime.timezone(datetime.timedelta(hours=5)))
    assert app.echo(moment) == moment and type(app.echo(moment)) is datetime.datetime


def test_objects_are_handles_of_mirrored_classes():
    token = app.make_token("abc")
    assert type(token) is Token and isinstance(token, app.Base)
    assert token.text == "abc" and token.upper() == "ABC"
    assert token == token and token != app.make_token("abc")
    assert {token: 1}[token] == 1
    token.text = "x"
    assert token.text == "x"
    assert app.color("red") is Color.RED and [c.name for c in Color] == ["RED", "GREEN"]


def test_exceptions_arrive_as_exceptions():
    with pytest.raises(ValueError, match="bad value"):
        app.fail_value()
    with pytest.raises(NotFound) as caught:
        app.find("k")
    assert isinstance(caught.value, KeyError) and caught.value.key == "k"


def test_protocols_go_to_the_host():
    bag = app.Bag([3, 1, 2])
    assert len(bag) == 3 and 2 in bag and 7 not in bag and bag[0] == 3 and bool(bag)
    assert list(bag) == [3, 1, 2] and sorted(bag) == [1, 2, 3]
    assert str(bag) == "Bag(3)" and f"{bag}" == "Bag(3)"
    assert list(app.count(3)) == [0, 1, 2]
    with app.Resource() as resource:
        assert resource.open is True
    assert app.Resource.closed_count() == 1


def test_changes_to_arguments_come_back():
    items = [1, 2]
    app.append_to(items, 3)
    assert items == [1, 2, 3]
    record = {"b": 1, "a": 2}
    assert app.read_only(record) == ["a", "b"] and record == {"b": 1, "a": 2}


def test_the_tests_own_functions_and_objects_are_called_back():
    seen = []
    assert app.apply(lambda x: seen.append(x) or x * 2, 5) == 10 and seen == [5]
    repository = Repository()
    assert app.store(repository, "a") == 1 and repository.saved == ["a"]
    buffer = io.StringIO()
    app.write_to(buffer, "hi")
    assert buffer.getvalue() == "hi"
    assert app.apply(str.upper, "x") == "X" and app.apply(int, "7") == 7
    with pytest.raises(ValueError, match="timezone required"):
        app.require_aware(datetime.datetime(2026, 1, 1, tzinfo=NoOffset()))


def test_a_failed_check_in_a_callback_sticks():
    def check(value):
        assert value == 1

    with pytest.raises(AssertionError):
        app.swallow(check, 2)


def test_a_star_import_gives_the_public_names():
    space = {}
    exec("from app import *", space)
    assert space["Token"] is Token and space["echo"](1) == 1 and "where" in space


def test_what_is_not_the_tests_own_is_refused():
    with pytest.raises(TypeError, match=r"cannot be passed .*test_semantics.py:\\d+"):
        app.echo(object())
'''


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


def isolated_challenge(folder: Path, hidden: str, *, test_run: str = "60s") -> Challenge:
    """A one-phase isolated challenge whose hidden tests are ``hidden``; the workspace is ``app.py``."""
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / "app.py").write_text("")
    (folder / "tests" / "phase1").mkdir(parents=True)
    (folder / "tests" / "phase1" / "test_semantics.py").write_text(hidden)
    (folder / "challenge.yaml").write_text(CHALLENGE.format(test_run=test_run))
    return load_challenge(folder)


#: The separate-user fallback is covered by test_sandbox_fallback.py, whose interpreter that
#: user can reach (export-time, isolated, under it).
SANDBOXES = [
    pytest.param("warm", marks=needs_bubblewrap),
    pytest.param("cold", marks=needs_bubblewrap),
    "limits-only",
]


async def grade(challenge: Challenge, tmp_path: Path, source: str, how: str) -> TestRun:
    """One run of ``challenge``'s hidden tests on ``app.py`` = ``source``, ``how``: warm or cold
    under bubblewrap, or in a weaker sandbox."""
    workspace = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    (workspace.path / "app.py").write_text(source)
    tree = await workspace.snapshot()
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    sandbox = Sandbox("limits-only", "chosen by the test") if how == "limits-only" else None
    runner = PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=environment, sandbox=sandbox
    )
    if how != "warm":
        return await runner.run(tree, ("phase1",))
    async with runner:
        run = await runner.run(tree, ("phase1",))
        assert runner.warm is not None
        assert runner.warm.served == 1
        return run


def failures(run: TestRun) -> dict[str, str]:
    """Each failing test's name and what it said."""
    return {t.id.rsplit("::", 1)[1]: t.detail for p in run.phases for t in p.tests if t.outcome != "passed"}


@pytest.mark.parametrize("how", SANDBOXES)
async def test_honest_code_works_across_the_boundary(tmp_path: Path, how: str) -> None:
    """Types, mirrors, exceptions, protocols, callbacks and changed arguments behave as the tests
    expect in-process, while no module of the workspace is in the test process."""
    challenge = isolated_challenge(tmp_path / "challenge", SEMANTICS)
    run = await grade(challenge, tmp_path, HONEST, how)
    assert run.status == "ok", run.detail
    assert failures(run) == {}
    assert run.phases[0].passed == 10


BROKEN_HOST = '''\
"""Isolated hidden tests of an app that breaks its host: {what}."""

import app


def test_breaks_it():
    assert app.{call}() == 1


def test_a_later_call_fails_at_once():
    assert app.echo(2) == 2


def test_what_needs_no_workspace_passes():
    assert 1 + 1 == 2
'''

#: The agent's code finds the socket to the tests among its descriptors.
SOCKET = (
    "import os, stat\n"
    "def sock():\n"
    "    return next(fd for fd in range(3, 256) if os.path.exists(f'/proc/self/fd/{fd}')"
    " and stat.S_ISSOCK(os.fstat(fd).st_mode))\n"
)
#: How the agent's code breaks the host, and what the tests must be told.
BREAKS = {
    "dies": ("import os\ndef dies():\n    os._exit(3)\n", "the workspace host is gone"),
    "hangs": ("def hangs():\n    while True:\n        pass\n", "did not answer within 6s"),
    "garbles": (
        f"{SOCKET}def garbles():\n    os.write(sock(), b'\\x00\\x00\\x00\\x05hello')\n    return 1\n",
        "broke the protocol",
    ),
    "floods": (
        f"{SOCKET}def floods():\n    os.write(sock(), (1 << 30).to_bytes(4, 'big'))\n    return 1\n",
        "frame of",
    ),
}


@pytest.mark.parametrize("how", [pytest.param("warm", marks=needs_bubblewrap), "limits-only"])
@pytest.mark.parametrize("what", sorted(BREAKS))
async def test_a_broken_host_fails_the_tests_waiting_on_it_not_the_run(
    tmp_path: Path, what: str, how: str
) -> None:
    """A host that exits, loops, sends garbage or announces a gigabyte: the run is graded ``ok``,
    the test that called it and every later call fail saying why, the rest pass."""
    source, said = BREAKS[what]
    hidden = BROKEN_HOST.format(what=what, call=what)
    challenge = isolated_challenge(tmp_path / "challenge", hidden, test_run="12s")
    run = await grade(challenge, tmp_path, source + "\ndef echo(value):\n    return value\n", how)
    assert run.status == "ok", run.detail
    failed = failures(run)
    assert sorted(failed) == ["test_a_later_call_fails_at_once", "test_breaks_it"], failed
    assert said in failed["test_breaks_it"], failed
    assert "HostError" in failed["test_a_later_call_fails_at_once"], failed


CUT_SHORT = '''\
"""Isolated hidden tests with a per-test timeout cutting a call short."""

import app


def test_a_slow_call_times_out():
    assert app.slow(2.5) == 2.5


def test_the_next_call_waits_for_it_and_works():
    assert app.echo(3) == 3
'''


@pytest.mark.parametrize("how", [pytest.param("warm", marks=needs_bubblewrap), "limits-only"])
async def test_a_call_cut_short_by_the_per_test_timeout_is_waited_for(tmp_path: Path, how: str) -> None:
    """The per-test alarm fails the test whose call is slow, as in-process; the host finishes that
    call (half a second later) and the next test's call is answered."""
    challenge = isolated_challenge(tmp_path / "challenge", CUT_SHORT)
    spec = challenge.root / "challenge.yaml"
    spec.write_text(
        spec.read_text().replace("    isolation: process\n", "    isolation: process\n    timeout: 2s\n")
    )
    source = (
        "import time\n\n\ndef slow(n):\n    time.sleep(n)\n    return n\n\n\ndef echo(v):\n    return v\n"
    )
    run = await grade(load_challenge(challenge.root), tmp_path, source, how)
    assert run.status == "ok", run.detail
    failed = failures(run)
    assert list(failed) == ["test_a_slow_call_times_out"], failed
    assert "timed out after 2s" in failed["test_a_slow_call_times_out"]


async def test_a_host_that_never_gets_ready_is_the_graders_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace host that dies before it could run any of the agent's code: the run is invalid
    (never a zero for the agent), and says the host is gone."""
    broken = tmp_path / "broken" / "host.py"
    broken.parent.mkdir()
    broken.write_text("raise SystemExit('no host today')\n")
    scripts = [(broken if path.name == "host.py" else path, name) for path, name in isolation.SCRIPTS]
    monkeypatch.setattr(testrun, "SCRIPTS", scripts)
    challenge = isolated_challenge(tmp_path / "challenge", SEMANTICS)
    run = await grade(challenge, tmp_path, HONEST, "limits-only")
    assert run.status == "invalid", run.detail
    assert "the workspace host is gone" in run.detail


ESCAPES = """\
\"\"\"Isolated hidden tests where the agent's exceptions escape.\"\"\"

import app
import pytest


def test_its_own_exception_escapes():
    app.find("k")


def test_the_harness_frames_are_left_out_of_reports():
    with pytest.raises(Exception) as caught:
        app.find("k")
    shown = [str(entry.path) for entry in caught.traceback if not entry.ishidden(caught)]
    assert not [path for path in shown if path.endswith("remote.py")], shown


def test_a_skip_of_its_own_escapes():
    app.skips()


def test_the_rest_passes():
    assert app.echo(1) == 1
"""


@pytest.mark.parametrize("how", [pytest.param("warm", marks=needs_bubblewrap), "limits-only"])
async def test_an_exception_of_the_agents_that_escapes_a_test_fails_only_that_test(
    tmp_path: Path, how: str
) -> None:
    """pytest reports a mirrored exception (its traceback formatted, its class tested for truth)
    like any other, without the frames of the harness's ``remote.py`` (pytest would parse that
    file for each), and the agent's ``pytest.skip`` fails its test: the run is graded."""
    challenge = isolated_challenge(tmp_path / "challenge", ESCAPES)
    source = HONEST + "\n\ndef skips():\n    import pytest\n\n    pytest.skip('not today')\n"
    run = await grade(challenge, tmp_path, source, how)
    assert run.status == "ok", run.detail
    failed = failures(run)
    assert sorted(failed) == ["test_a_skip_of_its_own_escapes", "test_its_own_exception_escapes"], failed
    assert failed["test_its_own_exception_escapes"].startswith("app.NotFound: 'k'")
    assert 'File "/' in failed["test_its_own_exception_escapes"]  # the agent's frames, for its author
    assert "host.py" not in failed["test_its_own_exception_escapes"]
    assert failed["test_a_skip_of_its_own_escapes"].startswith("Skipped: not today")


PLANTED = '''\
"""Isolated hidden tests that star-import a workspace whose names pytest would collect."""

from app import *  # noqa: F403


def test_the_helper_answers():
    assert helper() == 1  # noqa: F405
'''

#: The agent's code: names and flags that would make pytest collect its own code as hidden tests.
PLANTS = """\
def helper():
    return 1


def test_planted():
    return None


test_planted.__test__ = True


def planted_check():
    return None


planted_check.__test__ = True


class TestPlanted:
    def test_inside(self):
        return None
"""


@pytest.mark.parametrize("how", [pytest.param("warm", marks=needs_bubblewrap), "limits-only"])
async def test_nothing_of_the_workspace_is_collected_as_a_hidden_test(tmp_path: Path, how: str) -> None:
    """A function or class of the agent's in a hidden module's globals is no test, whatever its
    name or ``__test__`` says: the run holds the hidden tests alone, and it is ``ok``."""
    challenge = isolated_challenge(tmp_path / "challenge", PLANTED)
    run = await grade(challenge, tmp_path, PLANTS, how)
    assert run.status == "ok", run.detail
    assert [t.id.rsplit("::", 1)[1] for p in run.phases for t in p.tests] == ["test_the_helper_answers"]
    assert failures(run) == {}
