"""The reference systems, by the specs ``--ambig-system`` accepts (``oracle``, ``lexical``,
``retrieval``).

Their code lives in the repository's top-level ``baselines/`` room; this package reaches
it in an installed wheel and in a source checkout alike (:func:`pytest_ambigqa.rooms.room`).
"""

from ..rooms import room

__path__.append(str(room("baselines")))

from .offline import lexical, oracle, retrieval, sub_phrases  # noqa: E402

__all__ = ["lexical", "oracle", "retrieval", "sub_phrases"]
