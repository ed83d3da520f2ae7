"""Stage 5, presenting: the command line and everything a person reads.

==================  ===========================================================================
``cli``             the ``changeup`` command: one module per command group, each loaded on use
``exits``           the one table of exit statuses
``terminal``        the summary at the end of a run, as tables on the terminal
``markdown``        ``report.md``
``phrases``         how every format says a value: times, scores, counts, causes, headlines
``html_report``     the self-contained HTML report
``timeline``        a run's timeline: when each message fired, and why
``logging_config``  diagnostics through structlog on standard error
==================  ===========================================================================
"""
