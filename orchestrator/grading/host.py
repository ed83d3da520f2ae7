"""The workspace host: the one process of an isolated run that imports and runs the agent's code (a script).

Under ``testing: isolation: process`` each pytest process of a run has a workspace host beside
it, started in a sandbox of its own: the snapshot copy (its working directory and the last
folder of its ``sys.path``, loaded from source alone, as the bootstrap loads it) and the
grading interpreter, and nothing of the hidden tests, the run's output or the test process
(see ``zygote.py`` for the warm path, ``isolation.py`` for a cold one). It serves the test
process (``remote.py``) on one socket, one request at a time, until the socket closes:
import a module, read or set an attribute, call, operate. Every answer is plain data or a
handle (``crossing.py``); an exception of the agent's code is an answer too.

Nothing here is trusted by the tests: the agent's code runs in this process and may change
any of it. The tests check every answer; this module only makes the honest case work.
"""

from __future__ import annotations

import builtins
import datetime
import importlib
import importlib.util
import json
import math
import operator
import os
import socket
import sys
import threading
import traceback
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.grading import crossing
else:  # loaded by file inside the sandbox: crossing.py is beside this file

    def _beside(name: str, key: str) -> types.ModuleType:
        if key not in sys.modules:
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
            spec = importlib.util.spec_from_file_location(key, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[key] = module
            spec.loader.exec_module(module)
        return sys.modules[key]

    crossing = _beside("crossing", "changeup_crossing")

#: The most text (an exception's message or trace) one answer carries.
TEXT = 4000
#: Values whose contents a call can change: a call's arguments that hold one are sent back.
_MUTABLE = frozenset({"l", "d", "s", "ya", "od", "ct", "dd", "dq"})


def _arithmetic() -> dict[str, Callable[..., Any]]:
    table: dict[str, Callable[..., Any]] = {}
    for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift"):
        table[name] = getattr(operator, name)
    table.update({"and": operator.and_, "xor": operator.xor, "or": operator.or_})
    for name, function in list(table.items()):
        table[f"r{name}"] = lambda obj, other, f=function: f(other, obj)
        table[f"i{name}"] = getattr(operator, f"i{name}")
    return table


#: Every operation of ``crossing.OPERATIONS``, as the host performs it (the object first).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "len": len,
    "iter": iter,
    "next": next,
    "reversed": reversed,
    "bool": bool,
    "str": str,
    "repr": repr,
    "bytes": bytes,
    "int": int,
    "float": float,
    "complex": complex,
    "index": operator.index,
    "fspath": os.fspath,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
    "invert": operator.invert,
    "trunc": math.trunc,
    "floor": math.floor,
    "ceil": math.ceil,
    "dir": lambda obj: sorted(str(name) for name in dir(obj)),
    "enter": lambda obj: type(obj).__enter__(obj),
    "exit": lambda obj, kind: bool(
        type(obj).__exit__(obj, kind, None if kind is None else _made(kind), None)
    ),
    "contains": lambda obj, item: item in obj,
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "format": format,
    "round": lambda obj, digits: round(obj) if digits is None else round(obj, digits),
    "divmod": divmod,
    "rdivmod": lambda obj, other: divmod(other, obj),
    **_arithmetic(),
}


def _made(kind: type[BaseException]) -> BaseException:
    """An instance of the exception class ``kind``, even one whose constructor wants arguments."""
    try:
        return kind()
    except Exception:
        return kind.__new__(kind)


class Gone(Exception):
    """The test process closed the socket (or reset it, ending while an answer was on its way):
    the run is over."""


class Callback:
    """A function of the hidden tests: calling it runs it in the test process."""

    __slots__ = ("_changeup_id",)

    def __init__(self, ident: int) -> None:
        self._changeup_id = ident

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return _host().callback(self._changeup_id, None, args, kwargs)

    def __repr__(self) -> str:
        return "<a function of the hidden tests>"


class _Method:
    __slots__ = ("_changeup_id", "_changeup_name")

    def __init__(self, ident: int, name: str) -> None:
        self._changeup_id = ident
        self._changeup_name = name

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return _host().callback(self._changeup_id, self._changeup_name, args, kwargs)


class CallbackObject:
    """An object of the hidden tests: its public methods may be called (in the test process),
    nothing else of it is here."""

    __slots__ = ("_changeup_id",)

    def __init__(self, ident: int) -> None:
        self._changeup_id = ident

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Method(self._changeup_id, name)

    def __repr__(self) -> str:
        return "<an object of the hidden tests>"


class CallbackTzinfo(datetime.tzinfo):
    """A time zone of the hidden tests: its offsets and name come from the test process."""

    def __init__(self, ident: int) -> None:
        self._changeup_id = ident

    def utcoffset(self, dt: datetime.datetime | None) -> Any:
        return _host().callback(self._changeup_id, "utcoffset", (dt,), {})

    def dst(self, dt: datetime.datetime | None) -> Any:
        return _host().callback(self._changeup_id, "dst", (dt,), {})

    def tzname(self, dt: datetime.datetime | None) -> Any:
        return _host().callback(self._changeup_id, "tzname", (dt,), {})


class Host:
    """The objects handed to the tests (by remote id), and the conversation on the socket."""

    def __init__(self, sock: socket.socket, workspace: str) -> None:
        self.sock = sock
        self.workspace = os.path.join(os.path.realpath(workspace), "")
        self.frames = crossing.Frames()
        self.objects: dict[int, object] = {}
        self.rids: dict[int, int] = {}  # id(object) → remote id, for the objects held
        self.next_rid = 0
        self.next_id = 0
        self.depth = 0
        self.classes: dict[type, crossing.ClassInfo] = {}
        self.thread = threading.get_ident()

    def serve(self) -> None:
        """Answer requests until the test process closes the socket."""
        while True:
            try:
                message = self.receive()
                if message.is_reply:
                    raise crossing.ProtocolError(
                        f"a reply to {message.re}, which is no request of the host's"
                    )
                self.answer(message)
            except Gone:
                return

    # --- the socket ----------------------------------------------------------------------

    def receive(self) -> crossing.Message:
        while True:
            body = self.frames.next()
            if body is not None:
                return crossing.parse(body)
            try:
                data = self.sock.recv(max(65536, self.frames.wanted()))
            except (ConnectionResetError, BrokenPipeError):
                raise Gone() from None
            if not data:
                raise Gone()
            self.frames.feed(data)

    def _sendall(self, payload: bytes) -> None:
        try:
            self.sock.sendall(payload)
        except (ConnectionResetError, BrokenPipeError):
            raise Gone() from None

    def send(self, message: dict[str, Any]) -> None:
        try:
            payload = crossing.frame(message)
        except crossing.CannotCross as error:
            kind = "value" if "value" in message else "error"
            payload = crossing.frame({"re": message["re"], "error": self.refusal(f"its {kind} {error}")})
        self._sendall(payload)

    # --- requests ------------------------------------------------------------------------

    def answer(self, message: crossing.Message) -> None:
        """Perform one request of the tests and send its answer (the error it raised, if any)."""
        fields = message.fields
        for rid in fields.get("drop", ()):
            obj = self.objects.pop(rid, None) if type(rid) is int else None
            if obj is not None:
                self.rids.pop(id(obj), None)
        if "test" in fields:
            os.environ["PYTEST_CURRENT_TEST"] = fields["test"]
        reply: dict[str, Any] = {"re": message.id}
        self.depth += 1
        try:
            value, back = self.perform(message.op, fields)
            reply["value"] = self.encode(value)
            if back:
                reply["back"] = back
        except crossing.CannotCross as error:
            reply = {"re": message.id, "error": self.refusal(f"what it answered: {error}")}
        except crossing.ProtocolError:
            raise
        except BaseException as error:  # the agent's code raised: that is the answer
            reply = {"re": message.id, "error": self.raised(error)}
        finally:
            self.depth -= 1
        self.send(reply)

    def perform(self, op: str, fields: dict[str, Any]) -> tuple[object, list[Any]]:
        if op == "hello":  # ready: nothing of the agent's has run yet
            return None, []
        if op == "import":
            return self.load(fields["name"]), []
        if op == "callback":
            raise crossing.ProtocolError("the tests asked the host for a callback")
        obj = self.held(fields["of"])
        if op == "getattr":
            return getattr(obj, fields["name"]), []
        if op == "setattr":
            setattr(obj, fields["name"], self.decode(fields["value"]))
            return None, []
        if op == "delattr":
            delattr(obj, fields["name"])
            return None, []
        if op == "op":
            operands = [self.decode(item) for item in fields["args"]]
            return OPERATIONS[fields["name"]](obj, *operands), []
        sent, flat = fields["args"], fields["kwargs"]
        args = [self.decode(item) for item in sent]
        kwargs = {str(k): self.decode(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
        result = obj(*args, **kwargs)  # type: ignore[operator]
        back: list[Any] = []
        for place, raw, value in [
            *zip(range(len(args)), sent, args, strict=True),
            *((str(k), v, kwargs[str(k)]) for k, v in zip(flat[::2], flat[1::2], strict=True)),
        ]:
            if _mutable(raw):
                now = self.encode(value)
                if now != raw:  # the agent's code changed a container the tests passed
                    back += [place, now]
        return result, back

    def load(self, name: str) -> dict[str, object] | None:
        """Import ``name`` for the tests: its remote id, if the workspace has it."""
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is not None and (name == error.name or name.startswith(f"{error.name}.")):
                return None
            raise
        if not self.ours(module):
            return None
        origin = getattr(module, "__file__", None)
        return {
            "rid": self.rid(module),
            "package": hasattr(module, "__path__"),
            "file": origin if type(origin) is str else None,
        }

    def ours(self, module: object) -> bool:
        """Whether ``module`` was loaded from the workspace."""
        places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
        return any(
            type(place) is str and os.path.realpath(place).startswith(self.workspace) for place in places
        )

    def held(self, rid: object) -> object:
        if type(rid) is not int or rid not in self.objects:
            raise crossing.ProtocolError(f"no object {rid!r} here")
        return self.objects[rid]

    def rid(self, obj: object) -> int:
        """The remote id of ``obj``, held from now on (until the tests drop it)."""
        known = self.rids.get(id(obj))
        if known is not None:
            return known
        self.next_rid += 1
        self.objects[self.next_rid] = obj
        self.rids[id(obj)] = self.next_rid
        return self.next_rid

    # --- values --------------------------------------------------------------------------

    def encode(self, value: object) -> Any:
        return crossing.encode(value, self.reference)

    def decode(self, data: Any) -> Any:
        return crossing.decode(data, self.resolve)

    def reference(self, value: object, write: Callable[[object], Any]) -> Any:
        kind = type(value)
        if issubclass(kind, BaseException):
            return self.exception(value, write, "")  # type: ignore[arg-type]
        if issubclass(kind, type):
            return self.describe(value).encode()  # type: ignore[arg-type]
        if kind in (Callback, CallbackObject, CallbackTzinfo):
            return ["o", value._changeup_id]  # type: ignore[attr-defined]
        return ["h", self.rid(value), self.describe(kind).encode()]

    def resolve(self, tag: str, fields: list[Any], read: Callable[[Any], object]) -> object:
        if len(fields) not in (1, 2) or type(fields[0]) not in (int, str):
            raise crossing.ProtocolError(f"a malformed {tag!r} value")
        if tag == "r":
            return self.held(fields[0])
        if tag == "cb":
            return Callback(fields[0])
        if tag == "co":
            return CallbackTzinfo(fields[0]) if fields[1:] == ["tzinfo"] else CallbackObject(fields[0])
        if tag == "bi":
            owner, _, attribute = str(fields[0]).partition(".")
            found = getattr(builtins, owner, None)
            if found is not None and attribute:
                found = getattr(found, attribute, None)
            if found is None:
                raise crossing.ProtocolError(f"no built-in {fields[0]}")
            return found
        raise crossing.ProtocolError(f"the tests cannot send {tag!r} values")

    def describe(self, cls: type, depth: int = 0) -> crossing.ClassInfo:
        """What the tests may know of ``cls``: where it is defined, its kind, its bases."""
        known = self.classes.get(cls)
        if known is not None:
            return known
        module, qualname = (_text(cls, name) for name in ("__module__", "__qualname__"))
        bases: tuple[crossing.ClassInfo, ...] = ()
        if depth < crossing.MAX_BASES:
            wide = [base for base in cls.__bases__ if base is not object][: crossing.MAX_BASES]
            bases = tuple(self.describe(base, depth + 1) for base in wide)
        home = sys.modules.get(module)
        info = crossing.ClassInfo(
            self.rid(cls),
            module,
            qualname,
            issubclass(cls, BaseException),
            home is not None and self.ours(home),
            bases,
        )
        self.classes[cls] = info
        return info

    def exception(self, error: BaseException, write: Callable[[object], Any], trace: str) -> Any:
        try:
            text = str(error)[:TEXT]
        except Exception:  # its __str__ fails: the class says enough
            text = f"<{type(error).__qualname__} that cannot be printed>"
        args = error.args if type(error.args) is tuple else ()
        info = self.describe(type(error)).encode()
        return ["x", self.rid(error), info, write(args), text, trace]

    def raised(self, error: BaseException) -> Any:
        """The answer for an exception the agent's code raised, with its trace from the agent's
        first frame (the host's own frames above it say nothing)."""
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename == __file__:
            frames = frames.tb_next
        try:
            trace = "".join(traceback.format_exception(type(error), error, frames))[-TEXT:]
        except Exception:
            trace = ""
        try:
            return crossing.encode(
                error,
                lambda value, write: (
                    self.exception(value, write, trace) if value is error else self.reference(value, write)
                ),
            )
        except crossing.CannotCross as problem:
            return self.refusal(f"the exception it raised: {problem}")

    def refusal(self, why: str) -> Any:
        """An error answer of the host's own: a ``ValueError`` saying what could not cross."""
        return self.encode(ValueError(f"the workspace's code answered what cannot cross to the tests: {why}"))

    # --- callbacks -----------------------------------------------------------------------

    def callback(
        self, ident: int, method: str | None, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> Any:
        """Call a callback of the tests' and wait for its answer, serving their requests meanwhile."""
        if threading.get_ident() != self.thread or self.depth == 0:
            raise RuntimeError("the hidden tests' functions can be called only while a test waits on a call")
        self.next_id += 1
        number = self.next_id
        flat = [part for k, v in kwargs.items() for part in (k, self.encode(v))]
        request = {"id": number, "op": "callback", "cb": ident, "method": method}
        self._sendall(crossing.frame({**request, "args": [self.encode(a) for a in args], "kwargs": flat}))
        while True:
            message = self.receive()
            if not message.is_reply:
                self.answer(message)
                continue
            if message.re != number:
                raise crossing.ProtocolError(f"a reply to {message.re} while {number} waits")
            if "value" in message.fields:
                return self.decode(message.fields["value"])
            name, text = _said(message.fields["error"])
            kind = getattr(builtins, name, None) if name else None
            if isinstance(kind, type) and issubclass(kind, Exception):
                raise kind(text)
            raise RuntimeError(text)


def _text(cls: type, name: str) -> str:
    """A class's ``__module__`` or ``__qualname__``, if it is text."""
    try:
        value = getattr(cls, name)
    except Exception:  # a metaclass of the agent's that will not say
        return ""
    return value if type(value) is str else ""


def _said(error: object) -> tuple[str | None, str]:
    if type(error) is not list or len(error) != 2 or type(error[1]) is not str:
        raise crossing.ProtocolError("a malformed error from the tests")
    name = error[0]
    return (name if type(name) is str else None), error[1]


def _mutable(raw: object) -> bool:
    """Whether an encoded value holds a container the call could change."""
    if type(raw) is not list or not raw:
        return False
    return raw[0] in _MUTABLE or any(_mutable(part) for part in raw[1:] if type(part) is list)


_HOST: Host | None = None


def _host() -> Host:
    if _HOST is None:
        raise RuntimeError("no tests to call back: this process serves none")
    return _HOST


def prepare(config: dict[str, Any], bootstrap: types.ModuleType) -> None:
    """Make the workspace importable, from source alone, after everything else (as the
    bootstrap does for an in-process run); start the effects probe when one is asked for."""
    os.environ.update(HOME=config["home"], TMPDIR=config["home"])
    if config.get("effects"):
        bootstrap._probe(config["effects"])
    bootstrap._source_only(config["workspace"])
    sys.path.append(config["workspace"])


def serve(config: dict[str, Any]) -> None:
    """Serve the tests on the socket at ``config["fd"]`` until they close it."""
    global _HOST
    sock = socket.socket(fileno=int(config["fd"]))
    sock.setblocking(True)
    _HOST = Host(sock, config["workspace"])
    _HOST.serve()


def main() -> int:
    """A cold host: ``python -I -B host.py CONFIG``; drop to ``CONFIG["user"]``, then serve."""
    config = json.loads(sys.argv[1])
    key = "bootstrap"
    bootstrap = sys.modules.get(key) or _beside(key, key)  # type: ignore[name-defined]
    bootstrap.drop(config.get("user"))
    prepare(config, bootstrap)
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
