"""What wraps every tool function (``ultra_kit.factory.with_settings``): its arguments checked by name
(``argument_check``), its exceptions mapped for the caller (``errors``)."""
