"""Warnings and errors shared across the package's rooms."""


class AmbigQAWarning(UserWarning):
    """Something pytest-ambigqa recovered from, that the user should still know about."""
