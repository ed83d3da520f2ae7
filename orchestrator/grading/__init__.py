"""The trust boundary: everything that decides whether a verdict counts, readable in one sitting.

=================  ============================================================================
``policy``         which verdicts count: ``counts(status)`` is the one question the report asks,
                   and a run that does not count is voided before the engine sees it
``testrun``        a hidden test run: the snapshot's export, the sealed copy of the hidden tests
                   under random names, the judgement, the verdicts per phase
``export``         each run's copy of its snapshot, kept for the next and checked before reuse
``harness``        the hardened pytest command line, the result stream, and how a run is judged
``bootstrap``      the first code of the test process (drop to the test user, import pytest,
                   check collected code, per-call checks, the machinery fingerprint)
``warm``           the session's warm interpreter, from outside: started with the session,
                   one request per run; ``zygote``: the warm interpreter itself, forking each
                   run a clean child in namespaces of its own
``isolation``      ``testing: isolation: process`` from outside: the workspace host's settings,
                   how strong its sandbox is here, its start on the cold path; ``crossing``:
                   what crosses between the tests and the host (plain data, handles, caps);
                   ``remote``: the tests' side (the finder, handles, mirrors, callbacks);
                   ``host``: the workspace host, the one process that runs the agent's code
``canaries``       canary tests drawn like the hidden tests
``effects``        prohibited effects: what a run's probe watches and what it noted; ``probe``:
                   the audit hook itself, in the test process (it observes, it never blocks)
``junit``          JUnit XML into verdicts; ``caseids``: the declared test ids against the collection
``verifier``       a ``command:`` phase run as its task's verifier: its mounts (``/app``,
                   ``/tests``, ``/logs/verifier``) and its result (JUnit, reward.json, reward.txt)
``seal``           the hidden tests' seals and the final checks
``sandbox``        bubblewrap for hidden tests (and the weaker fallbacks), the kinds, the limits
``agent_sandbox``  the agent's allow-list sandbox, its private HOME and its shares, its freezing
``bounds``         both sides' limits: the agent's and each test run's control group, their sizes
=================  ============================================================================

The plumbing it shares with the agents (processes, the neutral git, environments, the private
runtime and its toolsets) is in :mod:`orchestrator.system`; the layers are in docs/architecture.md.
"""

from orchestrator.grading.policy import CLEAN, counts, void

__all__ = ["CLEAN", "counts", "void"]
