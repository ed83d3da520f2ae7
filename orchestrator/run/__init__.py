"""Run composition: one run wired from its parts, what the CLI, calibration and a matrix call.

==================  ===========================================================================
``runs``            a run: its folder, its real parts, the session, its scores, its reports
``rescore``         a run folder graded again from its stored snapshots, and its reports
``logging_config``  diagnostics through structlog on standard error
==================  ===========================================================================
"""
