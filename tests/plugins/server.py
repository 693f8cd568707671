"""pytest fixtures for the server tests."""
