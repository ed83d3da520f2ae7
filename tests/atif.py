"""ATIF v1.4 (Harbor's Agent Trajectory Interchange Format, RFC 0001 as published), restated for
the tests: the required fields, the closed set of fields of each object, ``source`` one of three,
``step_id`` counting from 1, the agent-only fields only on agent steps, and every observation
naming a tool call of its own step. ``Trajectory.model_validate(document)`` checks a document.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Trajectory"]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Agent(_Closed):
    """ATIF's AgentSchema."""

    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class ToolCall(_Closed):
    """ATIF's ToolCallSchema: ``arguments`` is an object."""

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class Result(_Closed):
    """One result of an ObservationSchema."""

    source_call_id: str | None = None
    content: str | None = None


class Observation(_Closed):
    """ATIF's ObservationSchema."""

    results: list[Result]


class Metrics(_Closed):
    """ATIF's MetricsSchema (the fields this export may write)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] | None = None


class Step(_Closed):
    """ATIF's StepObject."""

    step_id: int
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _agent_only(self) -> Step:
        if self.source != "agent":
            assert (self.model_name, self.reasoning_content, self.tool_calls, self.metrics) == (None,) * 4
        made = {call.tool_call_id for call in self.tool_calls or []}
        for result in self.observation.results if self.observation else []:
            assert result.source_call_id in made, result
        return self


class Final(_Closed):
    """ATIF's FinalMetricsSchema."""

    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class Trajectory(_Closed):
    """ATIF's root object."""

    schema_version: str
    session_id: str
    agent: Agent
    steps: list[Step]
    notes: str | None = None
    final_metrics: Final | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _counted(self) -> Trajectory:
        assert [s.step_id for s in self.steps] == list(range(1, len(self.steps) + 1))
        assert self.schema_version.startswith("ATIF-v")
        return self
