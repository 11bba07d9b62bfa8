"""Backends run a case and report an :class:`~conformance.outcome.Outcome`."""
