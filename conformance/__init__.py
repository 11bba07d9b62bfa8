"""training-conformance: the harness.

Public surface: the ``conformance`` CLI (:mod:`conformance.cli`), the pytest plugin
(:mod:`conformance.pytest_plugin`), the case format (``schema/case-table.schema.json``, loaded by
:mod:`conformance.cases`) and the matcher (:func:`conformance.matcher.match`). Backends live in
:mod:`conformance.backends`.

PYTEST_DONT_REWRITE: the package is a pytest plugin's (entry point ``pytest11``) and ``conformance
run`` has imported it before pytest starts; it holds no asserts for pytest to rewrite.
"""
