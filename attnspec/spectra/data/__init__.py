"""Text corpora turned into windows of token ids for the attention-spectrum study.

The claim this module serves
----------------------------
Linformer (Wang et al. 2020, Section 3 and Figure 1) reports that the attention
probability matrices P of pretrained RoBERTa, computed on WikiText-103 and IMDB inputs of
n = 512 tokens, are approximately low rank: most of the mass of the normalised cumulative
singular-value curve sits in the first ~128 singular values. Reproducing that measurement
needs inputs that really are n tokens long (special tokens included), drawn reproducibly
from the two corpora. This package produces them; it knows nothing about models or spectra.

What ``load_inputs`` returns
----------------------------
``Inputs.input_ids`` is a list of ``num_inputs`` token-id lists, each of length
``<= seq_len`` and wrapped in the tokenizer's own special tokens (``[CLS] ... [SEP]`` for
BERT, ``<s> ... </s>`` for RoBERTa). ``Inputs.meta`` is a JSON-able record of how they
were made (corpus, split, source and its sha256, format, mode, short-document policy,
seq_len, how many windows were available, seed, ...), to be stored with the results.

Windows
-------
Let ``k`` be the number of special tokens the tokenizer adds to one sequence and
``L = seq_len - k`` the number of text tokens per window.

``mode="pack"`` (default for WikiText)
    The whole source (every article of the file, in file order) is tokenised as one
    stream and cut into consecutive, non-overlapping windows of ``L`` tokens, so a window
    may run across an article boundary (as Hugging Face's ``run_mlm.py`` ``group_texts``
    does). Each non-blank line is tokenised on its own and the results are concatenated:
    line breaks are not tokens; blank lines are dropped; nothing else is stripped (the
    `` = Title = `` headings stay). The final piece shorter than ``L`` is dropped
    (``short_policy="skip"`` or ``"pack"``) or kept as a shorter window (``"keep"``).
``mode="truncate"`` (default for IMDB, the aclImdb layout, JSONL, CSV and plain text)
    Each document is tokenised and cut to its first ``L`` tokens. Documents shorter than
    ``L`` follow ``short_policy``:

    - ``"skip"`` (default): dropped, so every input fills ``seq_len`` and every P is
      ``seq_len x seq_len``, as in the paper's n = 512 study;
    - ``"keep"``: used at their own length (the spectrum engine treats a shorter P as
      zero-padded, so its cumulative curve reaches 1 at its own length);
    - ``"pack"``: the short documents are concatenated, in corpus order, into one stream
      cut into full windows (the last partial piece is dropped); they come after the
      windows of the long documents in the pool.

    For WikiText in this mode a document is an article (from one `` = Title = `` heading
    to the next).

Documents with no tokens are always dropped. In IMDB-style text (every format except
WikiText) the HTML line breaks ``<br />`` (also ``<br>``, ``<br/>``) are replaced by a
space before tokenisation; this is recorded in ``meta["text_cleaning"]``.

Drawing
-------
``selection="pool"`` (the default, and attnspec's original rule):
every window the source offers forms a pool in corpus order, and ``num_inputs`` of them are
drawn without replacement as ``numpy.random.default_rng(seed).permutation(num_available)
[:num_inputs]``; ``meta["num_available"]`` is exact. With one window per document
(``mode="truncate"`` and ``short_policy`` ``"skip"`` or ``"keep"``, IMDB's default) the
pool needs only each document's token count, which :mod:`attnspec.spectra.data.token_counts` keeps
on disk: the first run on a corpus and tokenizer tokenises everything, later runs
tokenise only the documents drawn (and check their counts against the cached ones).
Windows cut from a stream (``mode="pack"``, WikiText's default, or ``short_policy="pack"``)
depend on everything before them, so there the whole source is tokenised every time.

``selection="documents"`` (one window per document only): the documents are visited in
the seeded order ``numpy.random.default_rng(seed).permutation(documents)`` and tokenised
chunk by chunk until ``num_inputs`` acceptable ones are found; the rest of the corpus is
never tokenised, and ``meta["num_available"]`` then counts the windows among the documents
tokenised (a lower bound, ``meta["num_available_exact"] = False``) unless
``count_available=True``. It needs no cache, but draws other inputs than ``"pool"`` for
the same seed.

Either way the same seed gives the same windows, and asking for more inputs with the same
seed keeps the earlier ones as a prefix.

Sources
-------
``data`` is ``"wiki103"``, ``"imdb"`` or a path. A name resolves first to a local copy in
``data_dir`` (else the folder named by the environment variable ``ATTNSPEC_DATA_DIR``,
else ``../shared/data`` when it exists: :func:`resolve_data_dir`) laid out like the
project's shared data folder (``wikitext103/wiki.{valid,test}.raw``,
``imdb/*.jsonl`` with a ``split`` field, or ``imdb/aclImdb/{train,test}/{pos,neg}/*.txt``),
then to the Hugging Face hub (``Salesforce/wikitext`` config ``wikitext-103-raw-v1``,
``stanfordnlp/imdb``) through the optional ``datasets`` library. Without ``split``, WikiText's
default is ``validation`` for a local copy and ``train`` from the hub (the only split with
the paper's 10k windows of 512 tokens). A name always wins over a
same-named file in the working directory (write ``./imdb`` for the file).

Local formats, detected from the path:

- WikiText raw files: ``*.raw`` / ``*.tokens`` (e.g. ``wiki.valid.raw``), or a directory
  holding ``wiki.<split>.raw`` files (``split`` picks one, default ``valid``);
- the aclImdb layout: a directory with ``{train,test}/{pos,neg}/*.txt`` (``split`` picks
  one, default ``test``) or a single ``{pos,neg}/*.txt`` split directory; one review per
  file, positives then negatives, each ordered by review id;
- JSONL (``*.jsonl``, ``*.ndjson``, or a directory of ``*.jsonl`` files read in name
  order): one JSON object per line with a string ``text`` field; with ``split`` given,
  only records whose ``split`` field equals it;
- CSV / TSV (``*.csv``, ``*.tsv``): the column ``text`` (any case), else the only text
  column; with ``split`` given, only rows whose ``split`` column equals it;
- anything else: plain UTF-8 text, one document per non-blank line.
"""
