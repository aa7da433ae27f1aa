"""The prompt server: renders sandboxed Jinja2 templates (files under templates/ or a user's folder)."""
