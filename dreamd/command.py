"""The ``dreamd`` command's entry point (``[project.scripts]`` and ``python -m dreamd``).

``dreamd hook`` runs at every prompt and every turn of a Claude Code session, so it starts
here without the rest of the command line (argparse, typing): :mod:`dreamd.cli.main` is imported
only for the other subcommands.
"""

import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        from dreamd.hook.main import main as hook_main

        return hook_main()
    from dreamd.cli.main import main as cli_main

    return cli_main()
