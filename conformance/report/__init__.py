"""Conformance reports: a ConformanceReport (YAML), JUnit XML, a plain log and a submission folder.

``collector`` is the pytest plugin that records the results and writes the files, ``model`` builds
the report and holds the result and exit-code rules, ``writers`` renders JUnit/log/submission,
``markdown`` renders a report for people and ``cli`` wires all of it into ``conformance``.
"""

from .model import API_VERSION, KIND, CaseResult, build_report, exit_code

__all__ = ["API_VERSION", "KIND", "CaseResult", "build_report", "exit_code"]
