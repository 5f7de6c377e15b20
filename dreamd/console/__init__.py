"""The console (``dreamd ui``): a local web view of every managed directory — records, history,
diffs, the spool — and the actions that change them, each a normal commit through the store.

``views`` reads (through the same store and history code as the CLI), ``actions`` writes,
``app`` is the Starlette application with its guards (token, Host, Origin), ``serve`` runs it.
"""
