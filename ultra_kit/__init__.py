"""The server kit: the server factory, settings, in-process calls, serving, files, errors, readers, limits.

Servers are built from it; the client uses it to call them. It holds no evaluation logic.
"""

from ultra_base.errors import InputError

__all__ = ["InputError"]
