"""The live backend's parts: a shared session (cluster, operator, watches) and the per-case run.

See :mod:`conformance.backends.live` for the entry point and :mod:`.case` for the steps.
"""
