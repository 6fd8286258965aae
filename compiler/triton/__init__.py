"""Triton on xcc (issue 16): to be written."""
