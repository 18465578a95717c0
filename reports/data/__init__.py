"""Reads of the results DB (read-only) and what a build keeps of them between builds."""
