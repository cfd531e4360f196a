"""Argument retrieval for the Touché shared tasks, packaged as TIRA software."""

__version__ = "0.1.0"
