"""The system under test: load it from a spec (``spec.py``), call it for an item with its
timeout (``call.py``; ``http.py`` for an endpoint), normalise its output (``answers.py``);
``replay.py`` replays a saved run's answers.

A system is any callable (sync or async, or a class to instantiate once) or an HTTP
endpoint. Only the keyword arguments a callable declares are passed (see DESIGN.md,
"The system-under-test contract").
"""

from .answers import to_answer
from .call import System, from_object
from .spec import load_system

__all__ = ["System", "from_object", "load_system", "to_answer"]
