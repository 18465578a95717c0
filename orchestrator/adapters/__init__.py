"""Output adapters: one module per output format, one registry (registry.py), one result shape
(results.py), one set of checks every report passes (validate.py). Pure: text in, ToolReport
out, or an EngineOutputError naming the field."""
