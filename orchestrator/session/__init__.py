"""Stage 2, the session: an agent at work, watched, tested, messaged, and every step logged.

=============  ================================================================================
``loop``       the session loop: events into the engine, its actions out to the world
``watcher``    the workspace's changes, debounced into batches (watchfiles)
``workspace``  the shadow git repository: snapshots, exports, diffs, the agent's commits
``replay``     re-deciding every trigger from a log, and where it disagrees
=============  ================================================================================

The seams the loop talks through are declared in :mod:`orchestrator.seams`; the log it writes
is :mod:`orchestrator.log`; a whole run (parts, session, scores, reports) is wired in
:mod:`orchestrator.run`.
"""
