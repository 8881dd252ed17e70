"""Evaluation harness: generate, grade, summarise, sweep."""
__version__ = "0.1.0"
