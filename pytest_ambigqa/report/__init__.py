"""Rendering: the scorecard model (``card/``) as a reader sees it, walked once into blocks of
formatted text (``view.py``) that thin writers print: the terminal, Markdown, HTML, CI and the
history page (whose script ports ``stats/paired.py`` for a comparison on a click).
"""
