"""The ``dreamd`` command line: argument parsing and one module per command group."""
