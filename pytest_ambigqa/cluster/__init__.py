"""Ray, for ``--ambig-executor=ray``: one connection to a cluster per run (:class:`pool.Cluster`)
and pools of actors on it (:class:`pool.ActorPool`) that call the system
(``systems/remote.py``) or run the local models that want a GPU, the reader and the embedder
(``models/remote.py``). Ray is imported only here, and only when the executor is ray."""
