"""The torture test (issue 6): the whole system under load, faults and hostile input.

``python -m tests.torture.run --duration 120 --backend offline --workdir DIR --json OUT`` runs a
real ``dreamd run`` against 8 client processes and a chaos loop, then drains and checks every
invariant (see :mod:`tests.torture.checker`). ``test_torture_short.py`` is the CI form.
"""
