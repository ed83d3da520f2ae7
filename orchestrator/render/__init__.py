"""Rendering: pure functions from a run's records to text, for a terminal, Markdown or HTML.

===================  ==========================================================================
``phrases``          how every format says a value: times, scores, counts, causes, headlines
``inert``            text taken from a run, made unable to act (markup, control characters)
``markdown``         ``report.md``
``html_report``      the self-contained HTML report
``terminal``         the summary at the end of a run, as tables on the terminal
``timeline``         a run's timeline: when each message fired, and why
``comparison_text``  ``compare.md`` and the comparison on the terminal
``comparison_html``  ``compare.html``
===================  ==========================================================================

A renderer reads records and returns text; it runs nothing and scores nothing.
"""
