"""Shared numerics with no attnspec imports above them: linear algebra, seeds and
confidence intervals, exact distribution functions."""
