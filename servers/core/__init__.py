"""What every server shares: the server factory, settings, readers, atomic writes, errors."""

from servers.core.errors import InputError

__all__ = ["InputError"]
