"""Tidemark orchestrator: plan → build → prepare → execute → parse → record → store."""
