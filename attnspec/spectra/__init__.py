"""Spectrum methods (the long-context approximation lives in longn)."""
