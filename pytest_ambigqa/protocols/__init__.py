"""How an item is put to a system: single-shot (one call, one answer: the published
protocols, wired in ``session/`` and ``evaluate.py``) and interactive clarification
(``interactive.py``, its episodes played by ``evaluate.Evaluator``; ``users.py``, the LLM user)."""
