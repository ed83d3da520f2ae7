"""Stage 4, scoring: the verdicts of a finished session turned into a score and a report.

=============  ================================================================================
``report``     ``report.json``: everything a finished run says, built from its log
``turns``      the report's messages to the agent and its turns
``rubric``     the weighted rubric and its items
``checks``     the checks a rubric item can name (evolution, protection, removal)
``judge``      the optional model judge of free-form rubric items
``manifest``   the frozen record of what ran: versions, options, hashes
``scope``      files changed outside ``allowed_paths``: reported, never scored
=============  ================================================================================

Stage 3, grading (:mod:`orchestrator.grading`), decides which verdicts count; re-scoring a run
folder is a run of its own (:mod:`orchestrator.run.rescore`).
"""
