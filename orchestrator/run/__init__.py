"""Run composition: one run wired from its parts, what the CLI, calibration and a matrix call.

==================  ===========================================================================
``runs``            a run: refused or made, composed from its parts: session, scores, reports
``parts``           what a run is made of, and the factory of the real parts
``folder``          a run's folder and its layout
``rescore``         a run folder graded again from its stored snapshots, and its reports
``logging_config``  diagnostics through structlog on standard error
==================  ===========================================================================
"""
