"""Local models behind small protocols (readers, embedders), the device they run on, and the
cost accounting of model calls."""
