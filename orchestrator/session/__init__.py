"""Stage 2, the session: an agent at work, watched, tested, messaged, and every step logged.

=============  ================================================================================
``loop``       the session loop: events into the engine, its actions out to the world
``runs``       run folders: what a run keeps, how a run is set up, refused or ended
``watcher``    the workspace's changes, debounced into batches (watchfiles)
``workspace``  the shadow git repository: snapshots, exports, diffs, the agent's commits
``eventlog``   the append-only log: its records, their types, writing and streaming reads
``replay``     re-deciding every trigger from a log, and where it disagrees
=============  ================================================================================

The seams the loop talks through are declared in :mod:`orchestrator.seams`.
"""
