"""Tests of the judge server."""
