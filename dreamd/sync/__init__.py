"""Team memory through git: the sync flow, the ``git`` executable, remote sets, installing a set, the daemon's sync, the team lease and the merge driver."""
