"""The spectrum study: how low-rank is attention in real models (the wing beside ``theory/``).

One concept per module, arrows pointing down (``tests/unit/test_layers.py`` checks them):

* ``job`` — the locked, resumable, shardable run (:func:`~attnspec.spectra.job.run_spectrum`);
  ``config`` its request (:class:`~attnspec.spectra.config.SpectrumConfig`); ``merge``
  shards into one result; ``scaling`` and ``compare`` build on finished runs;
* ``models`` (``model_names``, ``gguf``, ``packaged_mpnet``) load a transformer; ``capture``
  streams P per layer (``score_parts``: Q, K, V and a score bias read through hooks); ``layer_windows`` says which positions each layer may see; ``data/`` turns text
  into token windows;
* ``engine`` (singular values), ``metrics`` (curves and metrics), ``metric_table`` (the
  per-matrix metrics as one table), ``aggregate`` (the mergeable accumulator), ``nulls`` and
  ``baselines`` (the null baselines' protocol and samplers), ``checkpoint`` (``state.npz``), ``reading`` (where a curve is read);
* ``result_checks`` verifies saved runs, ``figure_record`` the plotting choices a run keeps;
  ``real_attention`` samples P for the theorem checks.

Importing this package imports nothing else; each module is imported where it is used.
"""
