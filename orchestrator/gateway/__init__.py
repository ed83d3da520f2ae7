"""The model gateway: a loopback HTTP proxy between an agent's CLI and its model provider.

For each session, changeup starts a :class:`~orchestrator.gateway.proxy.Gateway` on 127.0.0.1
and points the agent's CLI at it through the CLI's base-URL variables
(:func:`~orchestrator.gateway.access.agent_variables`). The gateway

- checks the session's token on every request (the agent holds that token, never a real key),
  adds the real key read from changeup's own environment, and forwards to the provider (or to
  ``--model-upstream``), streaming the answer back as it arrives;
- reads the provider's own usage figures out of each answer (:mod:`.usage`), prices them from a
  dated table (:mod:`.prices`), and reports one ``model.request`` record per request.

==============  ===========================================================================
``providers``   the APIs it routes (Anthropic, OpenAI, Gemini): paths, key headers, upstreams
``usage``       an answer's token figures, from its JSON or its server-sent events
``prices``      the price table (shipped, dated; a user's file overrides it) and a request's cost
``proxy``       the HTTP proxy itself (h11 towards the agent, httpx towards the provider)
``access``      what the agent is given (variables, token) and what it must not hold (keys)
``recording``   every exchange kept in the run folder, and a recorded run's answers replayed
==============  ===========================================================================

The package exports nothing itself: importing it loads no HTTP machinery.
"""
