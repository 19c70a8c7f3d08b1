"""Test support: the pytest plugin (:mod:`pypto.testing.pytest_plugin`)."""
