"""The scorecard model: a run's items aggregated into suites, metrics and slices with their
intervals, the gates, the papers' rows, repeated trials, two runs compared, the judge against
human labels, and a saved scorecard read back.

It computes over ``stats/`` and imports nothing of ``report/``, which renders it
(``tests/test_layout.py`` holds it to that).
"""
