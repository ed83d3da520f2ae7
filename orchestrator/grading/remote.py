"""The hidden tests' side of an isolated run: the workspace's modules as proxies (a script module).

Under ``testing: isolation: process`` no module of the workspace is ever imported into the
test process. ``bootstrap.run`` loads this file (beside it in the harness) and calls
:func:`connect` before pytest starts, instead of putting the workspace on ``sys.path``. From
then on, ``import app`` or ``from app import f`` finds nothing on the path (the workspace is
not there) and reaches :class:`WorkspaceFinder`, last of ``sys.meta_path``: it asks the
*workspace host* (``host.py``, another process, another user, namespaces of its own) to
import the module, and gives the tests a :class:`RemoteModule` joined to it by the socket
the bootstrap was handed.

What comes back is plain data (``crossing.py``: exact built-in and standard-library value
types, rebuilt here from primitive fields) or a :class:`Handle`. A handle equals only itself:
``==``, ``!=`` and ``hash`` are decided here, from identity, and ordering is refused, so no
``__eq__`` of the agent's ever decides a comparison of the tests. Attribute access, calls,
iteration, ``len``, indexing, ``in``, truth, conversions, arithmetic and ``with`` go to the
host and answer plain data or handles. Handles are instances of local *mirrors* of the
agent's classes (same names, mirrored bases), one per remote class, so ``type(r) is
app.Token`` and ``isinstance(r, app.Base)`` hold for honest code; an exception the agent's
code raises arrives as a real exception: a built-in (or already imported standard-library)
class as itself, the agent's as a mirror with mirrored bases.

What the tests pass in crosses as plain data; the host's own objects as their handles; a
function, method or object the hidden tests define (and ``io.StringIO``/``BytesIO``) as a
*callback* the host may only call (an object: only its public methods): it runs here, and
an assertion or pytest outcome it raises fails the test whatever the agent's code does with
the error it gets. Anything else is refused, naming the test line and the type. Plain
containers passed in and changed by the agent's code are changed here too, in place.

A host that dies, hangs past the per-call limit, or sends what is not the protocol raises
:class:`HostError` in the test that was waiting, and in every later one: the tests fail,
the run is still graded.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import datetime
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import io
import os
import select
import socket
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from orchestrator.grading import crossing
else:  # loaded by file inside the sandbox: crossing.py is beside this file

    def _beside(name: str) -> types.ModuleType:
        key = f"changeup_{name}"
        if key not in sys.modules:
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
            spec = importlib.util.spec_from_file_location(key, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[key] = module
            spec.loader.exec_module(module)
        return sys.modules[key]

    crossing = _beside("crossing")

GONE = "the workspace host is gone (its code exited, crashed or was killed)"
#: The most text of the host's (an exception's message or trace) kept for a test's output.
TEXT = 4000
PR_SET_DUMPABLE = 4
#: Every frame of this module is left out of pytest's failure reports (pytest reads the name in a
#: frame's globals): a failed test's trace ends at the test's own line, as in-process, with what
#: the host sent. Without it pytest parses this file for each of its four or five frames in every
#: failure's trace, about 10 ms a failure here, and shows only the harness's plumbing.
__tracebackhide__ = True


class HostError(Exception):
    """The workspace host failed the tests: it ended, stopped answering, broke the protocol, or
    its code raised what is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``)."""


class Handle:
    """An object of the workspace host's, seen from the tests: every operation goes there but
    equality, hashing and ordering, which stay here (identity only; no ordering)."""

    __slots__ = ("__weakref__", "_changeup_rid")

    def __getattr__(self, name: str) -> Any:
        return _link().request("getattr", of=_rid(self), name=name)

    def __setattr__(self, name: str, value: object) -> None:
        _link().request("setattr", of=_rid(self), name=name, value=value)

    def __delattr__(self, name: str) -> None:
        _link().request("delattr", of=_rid(self), name=name)

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return _link().call(_rid(self), args, kwargs)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        text = _link().op("repr", self)
        return text if type(text) is str else f"<{type(self).__qualname__} of the workspace>"

    def __enter__(self) -> Any:
        return _link().op("enter", self)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> bool:
        return _link().exit(self, error)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError(f"a {type(self).__qualname__} of the workspace cannot be copied or pickled here")


def _unary(name: str) -> Callable[[Handle], Any]:
    def operation(self: Handle) -> Any:
        return _link().op(name, self)

    operation.__name__ = f"__{name}__"
    return operation


def _binary(name: str) -> Callable[[Handle, object], Any]:
    def operation(self: Handle, other: object) -> Any:
        return _link().op(name, self, other)

    operation.__name__ = f"__{name}__"
    return operation


for _name in ("len", "iter", "next", "reversed", "bool", "str", "bytes", "int", "float", "complex", "index"):
    setattr(Handle, f"__{_name}__", _unary(_name))
for _name in ("fspath", "neg", "pos", "abs", "invert", "trunc", "floor", "ceil", "dir"):
    setattr(Handle, f"__{_name}__", _unary(_name))
for _name in sorted(crossing.BINARY - {"round"}):
    setattr(Handle, f"__{_name}__", _binary(_name))
setattr(Handle, "__round__", lambda self, digits=None: _link().op("round", self, digits))  # noqa: B010
setattr(Handle, "__setitem__", lambda self, key, value: _link().op("setitem", self, key, value))  # noqa: B010


class RemoteClass(type):
    """The class of a mirror: calling it, and reading or setting its attributes, go to the host."""

    def __call__(cls, *args: object, **kwargs: object) -> Any:
        return _link().call(_link().rid_of_class(cls), args, kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # the class machinery's own probes stay here
        return _link().request("getattr", of=_link().rid_of_class(cls), name=name)

    def __setattr__(cls, name: str, value: object) -> None:
        if name.startswith("__") and name.endswith("__"):
            super().__setattr__(name, value)
            return
        _link().request("setattr", of=_link().rid_of_class(cls), name=name, value=value)

    def __bool__(cls) -> bool:
        return True  # a class is true, whatever its __len__ (asked of the host) would say

    def __iter__(cls) -> Iterator[Any]:
        return iter(_link().op("iter", cls))

    def __len__(cls) -> int:
        return int(_link().op("len", cls))

    def __getitem__(cls, key: object) -> Any:
        return _link().op("getitem", cls, key)

    def __contains__(cls, item: object) -> bool:
        return bool(_link().op("contains", cls, item))


class RemoteException(Exception):
    """What every mirror of an exception class of the agent's derives from, besides its bases:
    its message is the host's ``str()`` of it, and other attributes are read from the host."""

    def __str__(self) -> str:
        return str(self.__dict__.get("_changeup_text", ""))

    def __getattr__(self, name: str) -> Any:
        rid = self.__dict__.get("_changeup_rid")
        if rid is None or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return _link().request("getattr", of=rid, name=name)


class RemoteModule(types.ModuleType):
    """A workspace module, as the tests import it: its attributes are the host module's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and name not in ("__all__", "__version__"):
            raise AttributeError(name)  # what the import system asks of a module stays here
        try:
            return _link().request("getattr", of=_module_rid(self), name=name)
        except AttributeError:
            if name != "__all__":
                raise
        listed = _link().op("dir", self)  # ``from module import *`` without __all__: its public names
        return [n for n in listed if type(n) is str and not n.startswith("_")] if type(listed) is list else []

    def __setattr__(self, name: str, value: object) -> None:
        if (name.startswith("__") and name.endswith("__")) or isinstance(value, RemoteModule):
            super().__setattr__(name, value)  # the import system's own, and submodules
            return
        _link().request("setattr", of=_module_rid(self), name=name, value=value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__:
            super().__delattr__(name)
            return
        _link().request("delattr", of=_module_rid(self), name=name)

    def __dir__(self) -> list[str]:
        listed = _link().op("dir", self)
        return sorted({*self.__dict__, *(listed if type(listed) is list else ())})


def _module_rid(module: RemoteModule) -> int:
    return int(module.__dict__["_changeup_rid"])


def _rid(handle: Handle) -> int:
    return int(object.__getattribute__(handle, "_changeup_rid"))


class WorkspaceFinder:
    """Last on ``sys.meta_path``: a module no folder of the tests has is the workspace's, if the
    host has it."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        """A spec for ``name`` when the host imported it from the workspace; else None."""
        parent = name.rpartition(".")[0]
        if parent and not isinstance(sys.modules.get(parent), RemoteModule):
            return None  # a submodule of a package of the tests' own
        found = _link().request("import", name=name)
        if found is None:
            return None
        if type(found) is not dict or type(found.get("rid")) is not int:
            raise HostError(f"the workspace host answered an import of {name} with {found!r:.100}")
        loader = _Loader(found["rid"])
        package = found.get("package") is True
        spec = importlib.machinery.ModuleSpec(name, loader, is_package=package)
        origin = found.get("file")
        spec.origin = origin if type(origin) is str else None
        spec.has_location = spec.origin is not None
        return spec


class _Loader(importlib.abc.Loader):
    """Makes the proxy of a module the host has already imported; there is nothing to run here."""

    def __init__(self, rid: int) -> None:
        self.rid = rid

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> RemoteModule:
        module = RemoteModule(spec.name)
        module.__dict__["_changeup_rid"] = self.rid
        if spec.submodule_search_locations is not None:
            module.__dict__["__path__"] = []  # a package: its submodules come here too
        if spec.origin is not None:
            module.__dict__["__file__"] = spec.origin
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing: the host ran the module's code when it imported it."""


class Link:
    """The test process's end of the socket: requests go one at a time (a lock), callbacks of
    the host's are served while a request waits, and what comes back is checked and decoded."""

    def __init__(self, sock: socket.socket, timeout: float, hidden: str) -> None:
        self.sock = sock
        self.timeout = timeout
        self.hidden = os.path.join(os.path.realpath(hidden), "")
        self.lock = threading.RLock()
        self.frames = crossing.Frames()
        self.next_id = 0
        self.broken = ""
        self.abandoned: tuple[int, float, str] | None = None  # a request given up on: id, sent, test
        self.handles: weakref.WeakValueDictionary[int, Handle] = weakref.WeakValueDictionary()
        self.classes: dict[int, type] = {}
        self.class_rids: dict[type, int] = {}
        self.dropped: list[int] = []
        self.callbacks: dict[int, tuple[object, bool]] = {}  # id → (function or object, callable)
        self.callback_ids: dict[int, int] = {}
        self.failure: BaseException | None = None  # a check that failed inside a callback
        self.depth = 0
        self.said_test = ""
        self.greeting: tuple[int, float] | None = None  # the hello not answered yet: id, sent
        self.tell = False  # whether the host is told which test runs (for its effects probe)

    # --- requests ------------------------------------------------------------------------

    def request(self, op: str, **fields: object) -> Any:
        """Send one request; its answer, decoded (or the exception it raised, raised here)."""
        if not self.lock.acquire(timeout=self.timeout):
            raise HostError(f"the workspace host was busy for {self.timeout:g}s with another thread's call")
        try:
            self.depth += 1
            try:
                return self._request(op, fields)
            finally:
                self.depth -= 1
                failure, self.failure = (self.failure, None) if self.depth == 0 else (None, self.failure)
                if failure is not None:
                    raise failure
        finally:
            self.lock.release()

    def call(self, rid: int, args: tuple[object, ...], kwargs: dict[str, object]) -> Any:
        """Call the host's object ``rid``; plain containers it changed are changed here too."""
        return self.request("call", of=rid, args=list(args), kwargs=kwargs)

    def op(self, name: str, *operands: object) -> Any:
        """The operation ``name`` on the host, its first operand the host's object."""
        first, *rest = operands
        return self.request("op", of=self._rid_of(first), name=name, args=rest)

    def exit(self, handle: Handle, error: BaseException | None) -> bool:
        """Leave a ``with`` block of the host's object; it may swallow an ordinary error, never a
        failed check of the tests (an assertion, a pytest outcome)."""
        kind = None if error is None else type(error) if _builtin_name(type(error)) else Exception
        swallow = bool(self.op("exit", handle, kind))
        return swallow and isinstance(error, Exception) and not isinstance(error, AssertionError)

    def rid_of_class(self, cls: type) -> int:
        """The remote id of a mirror class."""
        return self.class_rids[cls]

    def _rid_of(self, value: object) -> int:
        if isinstance(value, Handle):
            return _rid(value)
        if isinstance(value, RemoteModule):
            return _module_rid(value)
        if isinstance(value, type) and value in self.class_rids:
            return self.class_rids[value]
        raise TypeError(f"not an object of the workspace's: {type(value).__qualname__}")

    def hello(self) -> None:
        """Ask the host whether it is ready; its answer is awaited by :meth:`ready`."""
        self.next_id += 1
        self.greeting = (self.next_id, time.monotonic())
        self._send(crossing.frame({"id": self.next_id, "op": "hello"}))

    def ready(self) -> None:
        """Wait for the host's answer to :meth:`hello` (once)."""
        if self.greeting is None:
            return
        (ident, sent), self.greeting = self.greeting, None
        try:
            self._wait(ident, deadline=sent + self.timeout, serve=False)
        except HostError as error:
            self.broken = f"the workspace host did not start: {error}"
            raise HostError(self.broken) from None

    def _request(self, op: str, fields: dict[str, object]) -> Any:
        if self.broken:
            raise HostError(self.broken)
        self.ready()
        if self.abandoned is not None:
            self._settle()
        self.next_id += 1
        ident = self.next_id
        message: dict[str, Any] = {"id": ident, "op": op}
        originals: list[tuple[str | int, object]] = []
        try:
            for name, value in fields.items():
                if name == "args":
                    message["args"] = [self.encode(item) for item in value]  # type: ignore[attr-defined]
                    originals += list(enumerate(value))  # type: ignore[arg-type]
                elif name == "kwargs":
                    pairs = value.items()  # type: ignore[attr-defined]
                    message["kwargs"] = [part for k, v in pairs for part in (k, self.encode(v))]
                    originals += list(pairs)
                elif name == "value":
                    message["value"] = self.encode(value)
                else:
                    message[name] = value
        except crossing.CannotCross as error:
            raise TypeError(f"{error} ({self._place()})") from None
        self._announce(message)
        try:
            payload = crossing.frame(message)
        except crossing.CannotCross as error:
            raise TypeError(f"{error} ({self._place()})") from None
        sent = time.monotonic()
        try:
            self._send(payload)
            reply = self._wait(ident)
        except HostError as error:
            self.broken = self.broken or str(error)
            raise
        except BaseException:  # interrupted (the per-test alarm): the answer may still come
            self.abandoned = (ident, sent, self.said_test)
            raise
        back = reply.fields.get("back")
        if back:
            self._write_back(back, dict(originals))
        if "error" in reply.fields:
            raise self._decode(reply.fields["error"], error=True)
        return self._decode(reply.fields["value"])

    def _announce(self, message: dict[str, Any]) -> None:
        """Add the handles let go of (none the tests hold again) and, for the host's effects
        probe only, the test now running: nothing else of the tests need reach the host."""
        if self.dropped:
            held = self.handles
            message["drop"] = [rid for rid in self.dropped if rid not in held]
            self.dropped = []
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        if test != self.said_test:
            self.said_test = test
            if self.tell:
                message["test"] = test

    def _send(self, payload: bytes) -> None:
        try:
            self.sock.sendall(payload)
        except OSError as error:
            raise HostError(
                f"the workspace host is gone (its code exited, crashed or was killed): {error}"
            ) from None

    def _wait(self, ident: int, deadline: float | None = None, *, serve: bool = True) -> crossing.Message:
        """The reply to request ``ident``; the host's callbacks are served meanwhile (or, for a
        request given up on, refused: the test that passed them is over)."""
        deadline = deadline if deadline is not None else time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.is_reply:
                if message.re == ident:
                    return message
                if message.re < ident:
                    continue  # the late answer to a request given up on
                raise HostError(f"the workspace host answered request {message.re}, which was never made")
            if message.op != "callback":
                raise HostError(
                    f"the workspace host sent a {message.op!r} request, which only the tests make"
                )
            if serve:
                self._send(crossing.frame(self._serve(message, ident)))
                deadline = time.monotonic() + self.timeout
            else:
                said = [None, "the test that passed this function is over"]
                self._send(crossing.frame({"re": message.id, "error": said}))

    def _receive(self, deadline: float) -> crossing.Message:
        while True:
            body = self._next_frame()
            if body is not None:
                try:
                    return crossing.parse(body)
                except crossing.ProtocolError as error:
                    raise HostError(f"the workspace host broke the protocol: {error}") from None
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                raise HostError(
                    f"the workspace's code did not answer within {self.timeout:g}s "
                    f"({self._place()}); later calls fail at once"
                )
            try:
                data = self.sock.recv(max(65536, self.frames.wanted()))
            except OSError as error:
                raise HostError(f"the workspace host is gone: {error}") from None
            if not data:
                raise HostError(f"{GONE}; later calls fail at once")
            self.frames.feed(data)

    def _next_frame(self) -> bytes | None:
        try:
            return self.frames.next()
        except crossing.ProtocolError as error:
            raise HostError(f"the workspace host broke the protocol: {error}") from None

    def _settle(self) -> None:
        """Before a new request: the one given up on must have been answered in its time."""
        assert self.abandoned is not None
        ident, sent, test = self.abandoned
        self.abandoned = None
        try:
            self._wait(ident, deadline=sent + self.timeout, serve=False)
        except HostError as error:
            where = f" (in {test})" if test else ""
            self.broken = f"the workspace's code did not return from an earlier call{where}: {error}"
            raise HostError(self.broken) from None

    # --- values --------------------------------------------------------------------------

    def encode(self, value: object) -> Any:
        """``value`` as it crosses to the host (raises ``crossing.CannotCross``)."""
        return crossing.encode(value, self._reference)

    def _reference(self, value: object, write: Callable[[object], Any]) -> Any:
        if isinstance(value, Handle):
            return ["r", _rid(value)]
        if isinstance(value, RemoteModule):
            return ["r", _module_rid(value)]
        if isinstance(value, type) and value in self.class_rids:
            return ["r", self.class_rids[value]]
        if isinstance(value, RemoteException) and "_changeup_rid" in value.__dict__:
            return ["r", value.__dict__["_changeup_rid"]]
        name = _builtin_name(value)
        if name:
            return ["bi", name]
        if type(value) in (datetime.datetime, datetime.time) and self._ours(value.tzinfo):  # type: ignore[attr-defined]
            return crossing.encode_datetime(value, ["co", self._callback(value.tzinfo, False), "tzinfo"])  # type: ignore[arg-type, attr-defined]
        if self._ours(value) or type(value) in (io.StringIO, io.BytesIO):
            if callable(value) and not isinstance(value, datetime.tzinfo):
                return ["cb", self._callback(value, True)]
            kind = "tzinfo" if isinstance(value, datetime.tzinfo) else None
            return ["co", self._callback(value, False), kind]
        raise crossing.CannotCross(
            f"a value of type {_type_name(value)} cannot be passed to the workspace's code: only plain "
            "data, its own objects, and functions and objects the hidden tests define cross"
        )

    def _callback(self, value: object, is_callable: bool) -> int:
        known = self.callback_ids.get(id(value))
        if known is not None and self.callbacks[known][0] is value:
            return known
        ident = len(self.callbacks) + 1
        self.callbacks[ident] = (value, is_callable)
        self.callback_ids[id(value)] = ident
        return ident

    def _ours(self, value: object) -> bool:
        """Whether the hidden tests define ``value``: a function of theirs, a method or partial of
        one, a class of theirs or an instance of one."""
        if isinstance(value, types.MethodType):
            value = value.__func__
        while isinstance(value, functools.partial):
            value = value.func
        if isinstance(value, types.FunctionType):
            return self._hidden(value.__code__.co_filename)
        kind = value if isinstance(value, type) else type(value)
        module = sys.modules.get(getattr(kind, "__module__", "") or "")
        if module is not None and self._hidden(str(getattr(module, "__file__", "") or "")):
            return True
        return any(
            isinstance(member, types.FunctionType) and self._hidden(member.__code__.co_filename)
            for member in vars(kind).values()
        )

    def _hidden(self, path: str) -> bool:
        return bool(path) and os.path.realpath(path).startswith(self.hidden)

    def _place(self) -> str:
        """Where in the hidden tests this process is now: ``file.py:line``."""
        frame = sys._getframe(1)
        while frame is not None:
            path = frame.f_code.co_filename
            if self._hidden(path):
                return f"{os.path.relpath(os.path.realpath(path), self.hidden)}:{frame.f_lineno}"
            frame = frame.f_back  # type: ignore[assignment]
        return "outside the hidden tests"

    def _decode(self, data: Any, *, error: bool = False) -> Any:
        try:
            value = crossing.decode(data, self._resolve)
        except crossing.ProtocolError as problem:
            self.broken = f"the workspace host broke the protocol: {problem}"
            raise HostError(self.broken) from None
        if error and not isinstance(value, BaseException):
            self.broken = f"the workspace host answered with an error that is not one: {value!r:.100}"
            raise HostError(self.broken)
        return value

    def _resolve(self, tag: str, fields: list[Any], read: Callable[[Any], object]) -> object:
        if tag == "h":
            rid, info = _fields(fields, 2)
            return self._handle(_int(rid), self._class(info))
        if tag == "K":
            return self._mirror(crossing.class_info(fields))
        if tag == "x":
            rid, info, args, text, trace = _fields(fields, 5)
            return self._exception(_int(rid), self._class(info), read(args), text, trace)
        if tag == "o":  # one of the tests' own callbacks, given back
            (ident,) = _fields(fields, 1)
            known = self.callbacks.get(_int(ident))
            if known is not None:
                return known[0]
        raise crossing.ProtocolError(f"the host cannot send {tag!r} values")

    def _class(self, info: object) -> type:
        parts = _list(info)
        if not parts or parts[0] != "K":
            raise crossing.ProtocolError("a handle whose class is not a class")
        return self._mirror(crossing.class_info(parts[1:]))

    def _handle(self, rid: int, cls: type) -> object:
        known = self.handles.get(rid)
        if known is not None:
            return known
        if not issubclass(cls, Handle):
            raise crossing.ProtocolError(f"a handle of the class {cls.__qualname__}, which is not the host's")
        handle = object.__new__(cls)
        object.__setattr__(handle, "_changeup_rid", rid)
        self.handles[rid] = handle
        weakref.finalize(handle, self.dropped.append, rid)
        return handle

    def _mirror(self, info: crossing.ClassInfo) -> type:
        known = self.classes.get(info.rid)
        if known is not None:
            return known
        local = None if info.workspace else _local_exception(info)
        if local is not None:
            self.classes[info.rid] = local
            return local
        if info.exception:
            bases = [self._mirror(b) for b in info.bases if b.exception]
            bases = [b for b in bases if issubclass(b, BaseException)] or [Exception]
            if not any(issubclass(b, Exception) for b in bases):
                bases = [Exception]  # a SystemExit-like class of the agent's: an ordinary exception here
            made = _make(info, [*bases, RemoteException], [RemoteException])
        else:
            bases = [self._mirror(b) for b in info.bases if b.module != "builtins"]
            made = _make(info, [b for b in bases if issubclass(b, Handle)] or [Handle], [Handle])
        self.classes[info.rid] = made
        self.class_rids[made] = info.rid
        return made

    def _exception(self, rid: int, cls: type, values: object, text: object, trace: object) -> BaseException:
        if type(values) is not tuple or type(text) is not str or type(trace) is not str:
            raise crossing.ProtocolError("a malformed exception")
        if not issubclass(cls, Exception):
            error: BaseException = HostError(f"the workspace's code raised {cls.__qualname__}: {text[:TEXT]}")
        elif issubclass(cls, RemoteException):
            error = cls.__new__(cls, *values)
            error.args = values
            error.__dict__.update(_changeup_rid=rid, _changeup_text=text[:TEXT])
        else:
            error = _rebuilt(cls, values)
        if trace:
            error.add_note(f"raised in the workspace's process:\n{trace[-TEXT:]}")
        return error

    def _write_back(self, back: list[Any], originals: dict[str | int, object]) -> None:
        for place, data in zip(back[::2], back[1::2], strict=True):
            original = originals.get(place)
            if original is not None:
                _update(original, self._decode(data))

    # --- callbacks -----------------------------------------------------------------------

    def _serve(self, message: crossing.Message, waiting: int) -> dict[str, Any]:
        """Run the callback the host asks for; the reply to send."""
        fields = message.fields
        reply: dict[str, Any] = {"re": message.id}
        known = self.callbacks.get(fields["cb"])
        method = fields["method"]
        try:
            if known is None:
                raise LookupError(f"no callback {fields['cb']}")
            target, is_callable = known
            if method is None and not is_callable:
                raise TypeError(f"a {_type_name(target)} of the tests is not callable")
            if method is not None:
                if method.startswith("_"):
                    raise AttributeError(
                        f"only public methods of the tests' objects may be called, not {method}"
                    )
                target = getattr(target, method)
                if not callable(target):
                    raise AttributeError(f"{method} is not a method")
            args = [self._decode(item) for item in fields["args"]]
            flat = fields["kwargs"]
            kwargs = {str(k): self._decode(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
            reply["value"] = self.encode(target(*args, **kwargs))  # type: ignore[operator]
        except HostError:
            raise
        except (AssertionError, Exception) as error:
            if isinstance(error, AssertionError):
                self.failure = self.failure or error
                reply["error"] = [None, "a check of the hidden tests failed in a callback"]
            else:
                kind = type(error)
                builtin = getattr(builtins, kind.__name__, None) is kind
                reply["error"] = [kind.__name__ if builtin else None, str(error)[:TEXT]]
        except BaseException as error:  # a pytest outcome (fail, skip) or an exit: it sticks
            self.failure = self.failure or error
            reply["error"] = [None, "a check of the hidden tests failed in a callback"]
        return reply


def _builtin_name(value: object) -> str:
    """``int``, ``len`` or ``str.lower``: a built-in the host has too, by its name ("" if not one)."""
    name = getattr(value, "__name__", None)
    if type(name) is not str:
        return ""
    with contextlib.suppress(Exception):
        if getattr(builtins, name, None) is value:
            return name
        owner = getattr(value, "__objclass__", None)
        owner_name = getattr(owner, "__name__", "")
        if getattr(builtins, owner_name, None) is owner and getattr(owner, name, None) is value:
            return f"{owner_name}.{name}"
    return ""


def _type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _local_exception(info: crossing.ClassInfo) -> type | None:
    """The tests' own exception class the host names, when it is a built-in or of a module this
    process has already imported (nothing is imported for it), and an ``Exception``."""
    module = sys.modules.get(info.module)
    if module is None or isinstance(module, RemoteModule) or not info.exception:
        return None
    found: object = module
    for part in info.qualname.split("."):
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found if issubclass(found, Exception) or info.module == "builtins" else None
    return None


def _make(info: crossing.ClassInfo, bases: list[type], fallback: list[type]) -> type:
    namespace = {"__module__": info.module, "__qualname__": info.qualname, "__slots__": ()}
    if not issubclass(fallback[0], Handle):
        del namespace["__slots__"]
    name = info.qualname.rpartition(".")[2] or "object"
    for attempt in (bases, fallback):
        with contextlib.suppress(TypeError):
            return RemoteClass(name, tuple(dict.fromkeys(attempt)), dict(namespace))
    return RemoteClass(name, (fallback[0],), dict(namespace))


def _rebuilt(cls: type, values: tuple[Any, ...]) -> BaseException:
    """An exception of a class of the tests' own, with the host's arguments."""
    try:
        error = cls(*values)
        if isinstance(error, BaseException):
            return error
    except Exception:  # its constructor wants other arguments: made without it
        pass
    made: BaseException = cls.__new__(cls, *values)
    made.args = values
    return made


def _update(original: object, new: object) -> None:
    """Make the plain container ``original`` hold what ``new`` holds, in place where it can."""
    if type(original) is not type(new):
        return
    if isinstance(original, list):
        if len(original) == len(new):  # type: ignore[arg-type]
            for index, (old, now) in enumerate(zip(original, new, strict=True)):  # type: ignore[call-overload]
                if type(old) is type(now) and isinstance(old, list | dict | set | bytearray):
                    _update(old, now)
                else:
                    original[index] = now
        else:
            original[:] = new  # type: ignore[call-overload]
    elif isinstance(original, dict):
        for key in [k for k in original if k not in new]:  # type: ignore[operator]
            del original[key]
        for key, now in new.items():  # type: ignore[attr-defined]
            old = original.get(key)
            if type(old) is type(now) and isinstance(old, list | dict | set | bytearray):
                _update(old, now)
            else:
                original[key] = now
    elif isinstance(original, set):
        original.clear()
        original.update(new)  # type: ignore[arg-type]
    elif isinstance(original, bytearray):
        original[:] = new  # type: ignore[call-overload]
    elif hasattr(original, "clear") and hasattr(original, "extend"):  # a deque
        original.clear()
        original.extend(new)


def _fields(fields: list[Any], count: int) -> list[Any]:
    if len(fields) != count:
        raise crossing.ProtocolError(f"expected {count} fields, got {len(fields)}")
    return fields


def _list(value: object) -> list[Any]:
    if type(value) is not list:
        raise crossing.ProtocolError(f"expected a list, got {value!r:.80}")
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise crossing.ProtocolError(f"expected a whole number, got {value!r:.80}")
    return value


_LINK: Link | None = None


def _link() -> Link:
    if _LINK is None:
        raise HostError("no workspace host: this run is not isolated")
    return _LINK


class Ready:
    """A pytest plugin of the bootstrap's: the session starts only once the host said it is
    ready. Its answer comes before any code of the agent's can run in it, so a host that never
    gets that far is the grader's failure (pytest stops before it collects: the run is invalid),
    not a zero; waiting here, not at :func:`connect`, lets the host start while pytest does."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def pytest_sessionstart(self, session: object) -> None:
        """Wait for the host's hello."""
        self.link.ready()

    def pytest_pycollect_makeitem(self, collector: object, name: str, obj: object) -> list[object] | None:
        """No test is collected from an object of the workspace's (a module, a mirror class, a
        handle) bound in a hidden module, by ``from app import *`` say: pytest asks nothing of it.
        Each of its questions (``__test__``, the bases of ``issubclass``) would be a round trip
        to the host, and the host's answer could make the agent's own function a hidden test.
        First of the implementations (made so in :func:`connect`)."""
        return [] if isinstance(obj, Handle | RemoteModule | RemoteClass) else None


def connect(config: dict[str, Any]) -> Ready:
    """Join the workspace host on the socket at ``config["fd"]``, with ``config["timeout"]``
    seconds per call, and make the workspace importable through it; the plugin returned waits
    for the host to be ready. ``config["hidden"]``: the hidden tests' root, which decides what
    the tests define; ``config["tell"]``: the host is told which test runs, for its effects
    probe; ``config["undumpable"]``: the host shares this process's user with no namespace
    between them, so this process cannot be traced or read through ``/proc`` by it."""
    global _LINK
    sock = socket.socket(fileno=int(config["fd"]))
    sock.setblocking(True)
    _LINK = Link(sock, float(config["timeout"]), str(config["hidden"]))
    _LINK.tell = bool(config.get("tell"))
    if config.get("undumpable"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _LINK.hello()
    sys.meta_path.append(WorkspaceFinder())
    import pytest  # the test process's own: loaded already

    pytest.hookimpl(tryfirst=True)(Ready.pytest_pycollect_makeitem)
    return Ready(_LINK)
