"""pytest fixtures for the scraper tests."""
