"""The repository's own test setup: pytester and the fixtures under ``fixtures/``, one concept a module."""

pytest_plugins = [
    "pytester",
    "fixtures.process",
    "fixtures.network",
    "fixtures.servers",
    "fixtures.models",
    "fixtures.data",
    "fixtures.browser",
    "fixtures.storage",
    "fixtures.ray_cluster",
    "fixtures.hub",
    "fixtures.tiers",
    "fixtures.otlp",
]
