"""training-conformance: the harness.

Public surface: the ``conformance`` CLI (:mod:`conformance.cli`), the pytest plugin
(:mod:`conformance.pytest_plugin`), the case format (``schema/case-table.schema.json``, loaded by
:mod:`conformance.cases`) and the matcher (:func:`conformance.matcher.match`). Backends live in
:mod:`conformance.backends`.
"""
