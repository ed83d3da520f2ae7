"""The providers the gateway routes: where the agent calls, where the request goes, whose key.

An agent's CLI calls the gateway under a prefix per provider (``/anthropic``, ``/openai/v1``,
``/gemini``), so the gateway never guesses the API from a path. The rest of the path is
appended to the provider's upstream root: the real API, the root a user's own base-URL variable
names (``OPENAI_BASE_URL=https://…/v1``), or ``--model-upstream`` (one server for every API, as
the tests' scripted model server is).

:class:`Upstreams` is read once from changeup's environment (:meth:`Upstreams.from_env`): the
real keys stay in changeup's process, and leave it only in the header of an upstream request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["PROVIDERS", "Provider", "Upstreams", "provider_for", "quota_refusal"]


@dataclass(frozen=True, slots=True)
class Provider:
    """One API: its prefix on the gateway, its real root, and how a key is sent to it."""

    name: str
    prefix: str  # the path under which an agent reaches it on the gateway
    root: str  # the real API's root (what ``prefix`` stands for)
    suffix: str  # what a base URL adds to the root (``/v1`` for OpenAI's)
    key_vars: tuple[str, ...]  # changeup's variables holding the real key, first found wins
    base_vars: tuple[str, ...]  # the user's variables that may name another root
    key_header: str
    bearer: bool = False

    def key_headers(self, key: str) -> dict[str, str]:
        """The header that carries ``key`` to this provider."""
        return {self.key_header: f"Bearer {key}" if self.bearer else key}


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "anthropic",
        "/anthropic",
        "https://api.anthropic.com",
        "",
        ("ANTHROPIC_API_KEY",),
        ("ANTHROPIC_BASE_URL",),
        "x-api-key",
    ),
    Provider(
        "openai",
        "/openai",
        "https://api.openai.com",
        "/v1",
        ("OPENAI_API_KEY",),
        ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
        "authorization",
        bearer=True,
    ),
    Provider(
        "gemini",
        "/gemini",
        "https://generativelanguage.googleapis.com",
        "",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        ("GOOGLE_GEMINI_BASE_URL",),
        "x-goog-api-key",
    ),
)


def provider_for(path: str) -> tuple[Provider, str] | None:
    """The provider a gateway path is under, and the rest of the path (None: under none)."""
    for provider in PROVIDERS:
        if path == provider.prefix or path.startswith(provider.prefix + "/"):
            return provider, path[len(provider.prefix) :] or "/"
    return None


def quota_refusal(provider: str, message: str) -> tuple[int, dict[str, object]]:
    """The status and JSON body ``provider`` documents for a request refused because the
    account's spending limit is reached: what its clients read as "out of quota, do not retry".

    Anthropic: 400 ``invalid_request_error`` (its answer once a spend limit is reached);
    OpenAI: 429 ``insufficient_quota``; Gemini: 429 ``RESOURCE_EXHAUSTED``.
    """
    if provider == "anthropic":
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if provider == "openai":
        error = {
            "message": message,
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
        return 429, {"error": error}
    return 429, {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}}


@dataclass(frozen=True, slots=True)
class Upstreams:
    """Where each provider's requests go and the real key each gets (absent: none known)."""

    roots: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    override: str | None = None  # ``--model-upstream``: one root for every provider

    @classmethod
    def from_env(cls, env: Mapping[str, str], override: str | None = None) -> Upstreams:
        """The keys and roots changeup's environment names; ``override`` replaces every root."""
        keys: dict[str, str] = {}
        roots: dict[str, str] = {}
        for provider in PROVIDERS:
            key = next((env[name] for name in provider.key_vars if env.get(name)), None)
            if key:
                keys[provider.name] = key
            base = next((env[name] for name in provider.base_vars if env.get(name)), None)
            if base:
                base = base.rstrip("/")
                if provider.suffix and base.endswith(provider.suffix):
                    base = base[: -len(provider.suffix)]
                roots[provider.name] = base
        return cls(roots, keys, override.rstrip("/") if override else None)

    def root(self, provider: Provider) -> str:
        """The root ``provider``'s requests go to."""
        return self.override or self.roots.get(provider.name) or provider.root

    def missing_key(self, provider: Provider) -> str | None:
        """Why ``provider``'s requests cannot be forwarded: its own root would get no key (none
        in changeup's environment, no ``--model-upstream``, no root of its own given); None: they can."""
        if provider.name in self.keys or self.override or provider.name in self.roots:
            return None
        names = " or ".join(provider.key_vars)
        return (
            f"changeup holds no {provider.name} API key for the gateway to add: set {names} where "
            "changeup runs (for a matrix on Ray, name it in the agent's send_env)"
        )

    def secrets(self) -> list[str]:
        """The real keys: what the agent must never be given."""
        return [key for key in self.keys.values() if key]
