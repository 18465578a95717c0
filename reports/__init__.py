"""Tidemark reports: DuckDB queries → page builders → Jinja2 Markdown → MkDocs site."""
