"""Tidemark's Hydra launcher for a Slurm fleet (see fleet_launcher.py)."""
