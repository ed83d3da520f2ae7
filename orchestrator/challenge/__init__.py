"""Stage 1, the challenge: what is run, read from YAML and checked before anything runs.

=============  ================================================================================
``model``      the challenge file's shape (pydantic), the loaded :class:`Challenge`, its digest
``loader``     reading a challenge folder: the YAML, the schema, and where each error is
``semantics``  what the schema cannot say: names, conditions, tests and paths that must exist
``sourcemap``  positions in the YAML, and a :class:`Problem` that points at one
``scaffold``   ``changeup new``: a challenge skeleton that validates
``solutions``  the reference and broken solutions as files, and laying them
``testids``    a hidden-test folder's files and test ids, read from source
``markers``    a test group's marker expression
=============  ================================================================================
"""
