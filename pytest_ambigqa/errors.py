"""Warnings and errors shared across the package's rooms."""


class AmbigQAWarning(UserWarning):
    """Something pytest-ambigqa recovered from, that the user should still know about."""


class ScorerUnavailable(Exception):
    """A model-backed scorer (the judge, a reader) could not answer; the message is the reason
    its metrics are unscored, as the item's report shows it."""
