"""The face: `tidemark`'s subcommands, the one place that touches Hydra and prints a UserError."""
