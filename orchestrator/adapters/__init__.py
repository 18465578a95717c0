"""Output adapters: one module per output format, one registry (registry.py), one result shape
(results.py). Pure: text in, ToolReport out."""
