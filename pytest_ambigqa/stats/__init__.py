"""Statistics: pure functions over numbers and arrays, each module citing its reference.

Bootstrap intervals (``bootstrap``), paired tests of two runs (``paired``), agreement and the
prediction-powered mean (``agreement``), anytime-valid confidence sequences (``sequential``),
stratified estimates (``strata``) and pass@k / pass^k (``trials``). This room imports nothing
of the package but itself (``tests/test_layout.py`` holds it to that): the scorecard model
(``card/``) calls it, and rendering (``report/``) reads the model.
"""
