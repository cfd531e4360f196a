"""Reproducible training of the shipped heads from ../shared/data (never needed at run time)."""
