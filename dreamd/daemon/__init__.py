"""The daemon: the supervising main loop, watchers, managed directories, job dispatch, the worker pool and its sync tick."""
