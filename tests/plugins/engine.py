"""pytest fixtures for the engine tests."""
