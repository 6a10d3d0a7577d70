"""Approximations of attention applied to a model's real Q, K, V (the fixed-k study).

:mod:`.protocol` is the extension point (a registry of named methods, each one function);
:mod:`.dense` the exact computation every method is compared with; :mod:`.methods` and
:mod:`.linformer_fit` the shipped methods; :mod:`.measure` the held-out measurement;
:mod:`.rule` the slope rule; :mod:`.end_to_end` the model run with every layer replaced.
"""
