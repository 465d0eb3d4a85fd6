"""The models the plugin asks: the chat client (``chat.py``, its call cache ``cache.py``), local
models behind small protocols (readers, embedders) and the device they run on, and the cost
accounting of model calls."""
