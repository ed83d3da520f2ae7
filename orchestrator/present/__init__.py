"""Stage 5, presenting: the command line, what people type.

==================  ===========================================================================
``cli``             the ``changeup`` command: one module per command group, each loaded on use
``matrix_progress`` a matrix's progress on the terminal
``rescore_progress`` re-scoring's progress on the terminal
``exits``           the one table of exit statuses
==================  ===========================================================================

What it prints is rendered in :mod:`orchestrator.render`; what it runs is wired in
:mod:`orchestrator.run`.
"""
