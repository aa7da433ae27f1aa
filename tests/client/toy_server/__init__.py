"""A small server used by the client tests (copied into a temporary folder by the tests)."""
