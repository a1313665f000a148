"""Bridges to other evaluation tools: an edge layer like ``clineval.cli`` (nothing in the core imports it).

- ``clineval.integrations.inspect`` (extra ``clineval[inspect]``): ``clineval import inspect LOG`` turns an
  inspect_ai eval log into a stored clineval run (:func:`~clineval.integrations.inspect.import_logs`), and
  :func:`~clineval.integrations.inspect.clineval_scorer` runs a clineval scorer as an inspect ``@scorer``.

Each integration imports its third-party library inside functions, so ``clineval --help`` stays fast and a
missing extra is one line (``inspect.MISSING_EXTRA``), never a traceback.
"""
