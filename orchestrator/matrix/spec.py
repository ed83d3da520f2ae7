"""The matrix: which challenges, which agents, how many trials, and the decision rule.

Written as a YAML matrix file (``changeup run --matrix FILE``; docs/compare.md) or given on
the command line (``changeup run CHALLENGE... --agent A --agent B --trials N``); either way it
becomes one :class:`Matrix`. The file is checked as challenge files are: unknown keys are
errors, and every problem is reported as ``FILE:LINE:COLUMN: message``, all of them at once.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.agents import AgentSpecError, parse_agent
from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.challenge.model import Challenge, Seconds
from orchestrator.challenge.schema_problems import schema_problems
from orchestrator.challenge.sourcemap import Path_, Problem, SourceError, load_yaml
from orchestrator.gateway.budget import BudgetError, Limits
from orchestrator.gateway.prices import PriceTable, PriceTableError
from orchestrator.log.cells import GatewayOrder
from orchestrator.scoring.judge import JudgeSpecError, parse_judge
from triggers.typecheck import did_you_mean

__all__ = [
    "MODES",
    "AgentEntry",
    "AgentPlan",
    "BackendModel",
    "CheatingBlocks",
    "CriticalFailureBlocks",
    "DecisionModel",
    "FullSuccessNotLower",
    "Matrix",
    "MatrixError",
    "MatrixFile",
    "MatrixModel",
    "TrialOverride",
    "gateway_order",
    "load_matrix",
    "matrix_from_command",
]

#: How a cell's session starts: ``evolving``, the challenge as written (each change arrives
#: mid-conversation); ``fresh``, at a later phase as a single task (``changeup run --start-at``:
#: the phases before it are the reference solution, its message is the briefing).
Mode = Literal["evolving", "fresh"]
MODES: tuple[str, ...] = typing.get_args(Mode)
_EVOLVING: list[Mode] = ["evolving"]
AGENT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: Ray's own resources, which a session asks for through ``backend.cpus``, never by name.
_RAY_OWN = ("CPU", "GPU", "memory", "object_store_memory")
#: Each id pattern in words, for errors.
_ID_RULES = {
    AGENT_NAME: "start with a letter or digit and hold only letters, digits, '.', '_' and '-' (e.g. v7)",
    ENV_NAME: "be an environment variable's name: letters, digits and '_', not starting with a digit",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrialOverride(_Strict):
    """Another ``--agent`` spec for some trials of an agent (the scripted agent's variants let one
    agent behave differently on different trials)."""

    trials: list[int] = Field(min_length=1, description="Trial numbers, from 1.")
    agent: str = Field(min_length=1, description="The --agent spec of those trials.")


class AgentEntry(_Strict):
    """One agent of the matrix: a display name, its ``--agent`` spec and options."""

    name: str = Field(pattern=AGENT_NAME, max_length=40, description="Shown in reports, e.g. v7.")
    agent: str = Field(min_length=1, description="An --agent spec: scripted, claude-code, command:CMD, ...")
    options: dict[str, str] = Field(default_factory=dict, description="--agent-option KEY=VALUE pairs.")
    per_trial: list[TrialOverride] = Field(default_factory=list, description="Other specs for some trials.")
    resources: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict,
        description="Ray custom resources each of its sessions needs: it runs only on nodes that have them.",
    )
    send_env: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(
        default_factory=list,
        description="Environment variables of the driver sent with each of its sessions to a Ray worker.",
    )
    model_gateway: bool | None = Field(
        None, description="As --model-gateway, for this agent's sessions (default: the matrix's)."
    )
    model_upstream: str | None = Field(
        None, description="As --model-upstream, for this agent's sessions (implies model_gateway)."
    )
    prices: str | None = Field(
        None, description="As --prices, for its sessions: relative to this file (implies model_gateway)."
    )
    budget: str | None = Field(
        None, description="As --budget, for this agent's sessions (implies model_gateway)."
    )


class CriticalFailureBlocks(_Strict):
    """Any critical failure of the candidate (confirmed or awaiting review) blocks the switch."""

    rule: Literal["critical_failure_blocks"]


class CheatingBlocks(_Strict):
    """Any counted trial of the candidate that passed a honeypot test blocks the switch."""

    rule: Literal["cheating_blocks"]


class FullSuccessNotLower(_Strict):
    """The candidate's full-success rate, on the challenges both ran, is not below the baseline's
    by more than ``margin``."""

    rule: Literal["full_success_not_lower"]
    margin: float = Field(0.0, ge=0, le=1, description="How far below the baseline's rate is tolerated.")


Rule = Annotated[CriticalFailureBlocks | FullSuccessNotLower | CheatingBlocks, Field(discriminator="rule")]


class DecisionModel(_Strict):
    """Should ``candidate`` replace ``baseline``? Every rule must pass."""

    candidate: str = Field(description="The agent name that would replace the baseline.")
    baseline: str = Field(description="The agent name in use now.")
    rules: list[Rule] = Field(min_length=1)


class BackendModel(_Strict):
    """Where the sessions run: on this machine (a process each), or on a Ray cluster (docs/scale.md)."""

    kind: Literal["local", "ray"] = Field(description="local: on this machine; ray: on a Ray cluster.")
    address: str | None = Field(None, description="ray: the cluster's head, HOST:PORT (or auto).")
    session_timeout: Seconds | None = Field(
        None,
        description="A session running longer is killed with its process tree (default: its limit + 10min).",
    )
    cpus: float = Field(1.0, gt=0, description="ray: the CPUs each session reserves on its node.")


class MatrixModel(_Strict):
    """Challenges x agents x modes x trials, and what decides."""

    challenges: list[str] = Field(min_length=1, description="Challenge folders, relative to this file.")
    agents: list[AgentEntry] = Field(min_length=1)
    trials: int = Field(1, ge=1, le=1000, description="Sessions per challenge, agent and mode.")
    modes: list[Mode] = Field(default_factory=lambda: _EVOLVING, min_length=1)
    fresh_at: dict[str, str] = Field(
        default_factory=dict,
        description="Per challenge id, the phase its fresh sessions start at. Default: its last phase.",
    )
    retry_invalid: int = Field(0, ge=0, le=100, description="Retries of a trial whose run is invalid.")
    judge: str = Field("rules", description="Who scores judged criteria, as --judge.")
    agent_network: Literal["full", "none", "model", "on"] = Field(
        "full",
        description="As --agent-network: full (on is another name for it), none, or model: each "
        "session's model gateway alone (implies model_gateway; needs bubblewrap).",
    )
    agent_shares: list[str] = Field(default_factory=list, description="As --agent-share: PATH[:rw].")
    debounce: float = Field(0.3, ge=0, description="As --debounce, in seconds.")
    model_gateway: bool = Field(
        False, description="As --model-gateway: each session reaches its model through a gateway of its own."
    )
    model_upstream: str | None = Field(None, description="As --model-upstream (implies model_gateway).")
    prices: str | None = Field(
        None, description="As --prices: a price table file, relative to this file (implies model_gateway)."
    )
    budget: str | None = Field(
        None,
        description="As --budget: each session's model budget, tokens=N,cost=USD,requests=N "
        "(implies model_gateway).",
    )
    decision: DecisionModel | None = None
    backend: BackendModel | None = None


class MatrixFile(_Strict):
    """The whole of a matrix file."""

    matrix: MatrixModel


@dataclass(frozen=True, slots=True)
class AgentPlan:
    """An agent of the matrix, resolved: the spec each trial runs."""

    name: str
    spec: str
    options: dict[str, str] = field(default_factory=dict)
    per_trial: dict[int, str] = field(default_factory=dict)
    #: Ray custom resources its sessions need, and the driver's variables sent with them.
    resources: dict[str, float] = field(default_factory=dict)
    send_env: tuple[str, ...] = ()
    #: Its sessions' model gateway (None: they use none).
    gateway: GatewayOrder | None = None

    def spec_for(self, trial: int) -> str:
        """The ``--agent`` spec of trial ``trial`` (1-based)."""
        return self.per_trial.get(trial, self.spec)

    def specs(self, trials: int) -> list[str]:
        """Every distinct spec it runs over ``trials`` trials, in trial order."""
        return list(dict.fromkeys(self.spec_for(t) for t in range(1, trials + 1)))


@dataclass(frozen=True, slots=True)
class Matrix:
    """A checked matrix, its challenges loaded."""

    challenges: tuple[Challenge, ...]
    agents: tuple[AgentPlan, ...]
    trials: int
    modes: tuple[str, ...] = ("evolving",)
    #: challenge id → the phase its fresh sessions start at (every challenge, with mode fresh)
    fresh_at: dict[str, str] = field(default_factory=dict)
    retry_invalid: int = 0
    judge: str = "rules"
    network: bool = True
    #: Every agent's network is its model gateway alone (``agent_network: model``; ``network`` is False).
    model_only: bool = False
    shares: tuple[str, ...] = ()
    debounce: float = 0.3
    decision: DecisionModel | None = None
    #: Where the matrix file says its sessions run (None: it does not say).
    backend: BackendModel | None = None

    def agent(self, name: str) -> AgentPlan:
        """The agent called ``name``."""
        return next(a for a in self.agents if a.name == name)

    def start_of(self, challenge: str, mode: str) -> str | None:
        """The phase a session of ``challenge`` in ``mode`` starts at; None: the first (evolving)."""
        return self.fresh_at[challenge] if mode == "fresh" else None


class MatrixError(Exception):
    """A matrix that does not validate; ``problems`` says everything that is wrong."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def load_matrix(path: Path) -> Matrix:
    """Load and check the matrix file at ``path``; raises :class:`MatrixError` with every problem."""
    try:
        data, source = load_yaml(path.read_text(encoding="utf-8"), str(path))
    except SourceError as error:
        raise MatrixError([error.problem]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise MatrixError([Problem(str(path), 0, 0, f"cannot read the matrix file: {error}")]) from None
    if not isinstance(data, dict):
        found = "the file is empty" if data is None else f"found {type(data).__name__}"
        raise MatrixError(
            [Problem(str(path), 1, 1, f"expected a mapping with a top-level 'matrix:' key; {found}")]
        )
    try:
        model = MatrixFile.model_validate(data).matrix
    except ValidationError as error:
        raise MatrixError(schema_problems(error, source, MatrixFile, _ID_RULES)) from None
    problems: list[Problem] = []

    def report(where: Path_, message: str) -> None:
        problems.append(source.problem(("matrix", *where), message))

    challenges = _challenges(model.challenges, path.parent, report)
    agents = _agents(model, path.parent, report)
    fresh_at = _fresh_at(model, challenges, report)
    _check_settings(model, report)
    if problems:  # a matrix-wide key every agent shares is reported once
        raise MatrixError(sorted(set(problems)))
    return Matrix(
        challenges=tuple(challenges),
        agents=tuple(agents),
        trials=model.trials,
        modes=tuple(dict.fromkeys(model.modes)),
        fresh_at=fresh_at,
        retry_invalid=model.retry_invalid,
        judge=model.judge,
        network=model.agent_network in ("full", "on"),
        model_only=model.agent_network == "model",
        shares=tuple(model.agent_shares),
        debounce=model.debounce,
        decision=model.decision,
        backend=model.backend,
    )


def matrix_from_command(
    challenges: list[Challenge],
    specs: list[str],
    options: dict[str, str],
    *,
    trials: int,
    retry_invalid: int,
    judge: str,
    network: bool,
    shares: tuple[str, ...],
    debounce: float,
    gateway: GatewayOrder | None = None,
) -> Matrix:
    """The matrix ``changeup run CHALLENGE... --agent A --agent B --trials N`` describes: each agent
    named by its spec, ``options`` given to the one agent there may be then, ``gateway`` to all
    (``model_only``: the agents' whole network)."""
    if len(set(specs)) != len(specs):
        raise MatrixError(
            [Problem("--agent", 0, 0, "an agent is given twice; a matrix file can name two entries apart")]
        )
    if options and len(specs) > 1:
        raise MatrixError(
            [Problem("--agent-option", 0, 0, "with several --agent, give each its options in a matrix file")]
        )
    seen: dict[str, Path] = {}
    for challenge in challenges:
        if challenge.id in seen:
            raise MatrixError(
                [Problem(str(challenge.root), 0, 0, f"the challenge {challenge.id} is given twice")]
            )
        seen[challenge.id] = challenge.root
    return Matrix(
        challenges=tuple(challenges),
        agents=tuple(AgentPlan(spec, spec, dict(options), gateway=gateway) for spec in specs),
        trials=trials,
        retry_invalid=retry_invalid,
        judge=judge,
        network=network,
        model_only=gateway is not None and gateway.model_only,
        shares=shares,
        debounce=debounce,
    )


def _challenges(paths: list[str], base: Path, report: typing.Callable[[Path_, str], None]) -> list[Challenge]:
    loaded: list[Challenge] = []
    for index, text in enumerate(paths):
        where = Path(text).expanduser()
        folder = where if where.is_absolute() else base / where
        try:
            challenge = load_challenge(folder)
        except ChallengeError as error:
            detail = "\n  ".join(str(p) for p in error.problems)
            report(("challenges", index), f"{text!r} is not a valid challenge:\n  {detail}")
            continue
        if any(c.id == challenge.id for c in loaded):
            report(("challenges", index), f"the challenge {challenge.id} is listed twice")
            continue
        loaded.append(challenge)
    return loaded


def gateway_order(
    upstream: str | None, prices: Path | None, budget: str | None = None, model_only: bool = False
) -> GatewayOrder:
    """The gateway of ``--model-upstream``, ``--prices``, ``--budget`` and ``--agent-network model``
    (``model_only``): the price table's text is read now, and checked, so every session (on any
    node) prices with the table the matrix froze; the budget is checked. Raises
    :class:`~orchestrator.gateway.prices.PriceTableError` or
    :class:`~orchestrator.gateway.budget.BudgetError`."""
    if budget is not None:
        Limits.parse(budget)
    if prices is None:
        return GatewayOrder(upstream, budget=budget, model_only=model_only)
    try:
        text = prices.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PriceTableError(f"{prices}: cannot read the price table: {error}") from None
    PriceTable.from_text(text, str(prices))
    return GatewayOrder(upstream, text, str(prices), budget, model_only)


def _gateway(
    model: MatrixModel, index: int, base: Path, report: typing.Callable[[Path_, str], None]
) -> GatewayOrder | None:
    """The gateway of agent ``index``'s sessions: its own keys over the matrix's; None: it uses none."""
    entry = model.agents[index]
    own: Path_ = ("agents", index)
    model_only = model.agent_network == "model"
    if entry.model_gateway is False:
        for key in ("model_upstream", "prices", "budget"):
            if getattr(entry, key) is not None:
                report((*own, key), f"{key} is for a gateway, and model_gateway: false turns it off")
        if model_only:
            report(
                (*own, "model_gateway"),
                "agent_network: model makes the gateway each agent's whole network: it cannot be "
                "turned off for one (give that agent a matrix of its own)",
            )
        return None
    wanted = (entry.model_gateway, entry.model_upstream, entry.prices, entry.budget)
    matrix_wide = (model.model_gateway, model.model_upstream, model.prices, model.budget, model_only)
    if not any(wanted) and not any(matrix_wide):
        return None
    upstream, where_upstream = (
        (entry.model_upstream, (*own, "model_upstream"))
        if entry.model_upstream is not None
        else (model.model_upstream, ("model_upstream",))
    )
    if upstream is not None and not upstream.startswith(("http://", "https://")):
        report(where_upstream, f"{upstream!r} is no upstream: give an http:// or https:// URL")
    budget, where_budget = (
        (entry.budget, (*own, "budget")) if entry.budget is not None else (model.budget, ("budget",))
    )
    if budget is not None:
        try:
            Limits.parse(budget)
        except BudgetError as error:
            report(where_budget, str(error))
            return None
    prices, where_prices = (
        (entry.prices, (*own, "prices")) if entry.prices is not None else (model.prices, ("prices",))
    )
    if prices is None:
        return GatewayOrder(upstream, budget=budget, model_only=model_only)
    file = Path(prices).expanduser()
    try:
        return gateway_order(upstream, file if file.is_absolute() else base / file, budget, model_only)
    except PriceTableError as error:
        report(where_prices, str(error))
        return None


def _agents(model: MatrixModel, base: Path, report: typing.Callable[[Path_, str], None]) -> list[AgentPlan]:
    plans: list[AgentPlan] = []
    for index, entry in enumerate(model.agents):
        if any(p.name == entry.name for p in plans):
            report(("agents", index, "name"), f"the agent name {entry.name!r} is given twice")
        per_trial: dict[int, str] = {}
        for number, override in enumerate(entry.per_trial):
            where: Path_ = ("agents", index, "per_trial", number)
            for place, trial in enumerate(override.trials):
                if not 1 <= trial <= model.trials:
                    report((*where, "trials", place), f"trial {trial} is not one of 1..{model.trials}")
                elif trial in per_trial:
                    report((*where, "trials", place), f"trial {trial} is given another spec already")
                per_trial[trial] = override.agent
            _check_spec(override.agent, entry.options, (*where, "agent"), report)
        _check_spec(entry.agent, entry.options, ("agents", index, "agent"), report)
        for resource in entry.resources:
            if resource in _RAY_OWN:
                report(
                    ("agents", index, "resources", resource),
                    f"{resource!r} is Ray's own resource; name custom resources only "
                    "(a session's CPUs are backend.cpus)",
                )
        resources, send_env = dict(entry.resources), tuple(entry.send_env)
        gateway = _gateway(model, index, base, report)
        plans.append(
            AgentPlan(entry.name, entry.agent, dict(entry.options), per_trial, resources, send_env, gateway)
        )
    decision = model.decision
    if decision is not None:
        names = [p.name for p in plans]
        for role in ("candidate", "baseline"):
            name = getattr(decision, role)
            if name not in names:
                hint = did_you_mean(name, names)
                report(
                    ("decision", role),
                    f"{role} {name!r} is no agent of the matrix{hint} (agents: {', '.join(names)})",
                )
        if decision.candidate == decision.baseline:
            report(("decision", "baseline"), "the baseline and the candidate are the same agent")
    return plans


def _fresh_at(
    model: MatrixModel, challenges: list[Challenge], report: typing.Callable[[Path_, str], None]
) -> dict[str, str]:
    """Each challenge's fresh start (``fresh_at``, else its last phase), checked; {} without mode fresh."""
    if "fresh" not in model.modes:
        if model.fresh_at:
            report(("fresh_at",), "fresh_at is for mode fresh, which modes does not list")
        return {}
    ids = [c.id for c in challenges]
    for name in model.fresh_at:
        if name not in ids:
            report(("fresh_at", name), f"{name!r} is no challenge of the matrix{did_you_mean(name, ids)}")
    starts: dict[str, str] = {}
    for challenge in challenges:
        phase = model.fresh_at.get(challenge.id, challenge.phases[-1].id)
        problem = challenge.start_problem(phase)
        if problem:
            where: Path_ = ("fresh_at", challenge.id) if challenge.id in model.fresh_at else ("modes",)
            report(where, f"fresh sessions of {challenge.id} cannot start at {phase}: {problem}")
        starts[challenge.id] = phase
    return starts


def _check_spec(
    spec: str, options: dict[str, str], where: Path_, report: typing.Callable[[Path_, str], None]
) -> None:
    try:
        parse_agent(spec, options)
    except AgentSpecError as error:
        report(where, str(error))


def _check_settings(model: MatrixModel, report: typing.Callable[[Path_, str], None]) -> None:
    try:
        parse_judge(model.judge)
    except JudgeSpecError as error:
        report(("judge",), str(error))
    for index, share in enumerate(model.agent_shares):
        path = share.removesuffix(":rw").removesuffix(":ro")
        if not Path(path).expanduser().exists():
            report(("agent_shares", index), f"{share!r}: no such file or folder")
    backend = model.backend
    if backend is not None and backend.kind == "ray" and not backend.address:
        report(("backend",), "kind: ray needs an address: the head node's HOST:PORT (or auto)")
    if backend is not None and backend.kind == "local" and backend.address is not None:
        report(("backend", "address"), "address is for kind: ray; a local backend runs here")
