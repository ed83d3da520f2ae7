"""The records of a run, the bottom layer: what every other part writes and reads.

===================  ================================================================================
``records``          the session's own typed records, and one entry type for every line of a log
``shapes``           the shape each record kind's line must have, checked as a log is read
``eventlog``         the event log: its header, writing and streaming reads
``journal``          the one append-only JSON-lines file (one write a line, a torn last line repaired)
``documents``        a versioned JSON document read whole, or refused naming the version found
``matrix_manifest``  a matrix's frozen manifest (``manifest.json``)
``comparison``       a matrix's comparison (``compare.json``) and its trial rows
===================  ================================================================================

It imports nothing of ``orchestrator`` above it (``docs/architecture.md``).
"""
