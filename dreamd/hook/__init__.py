"""The Claude Code hook: ``dreamd hook``, the transcript reader, the context it injects, and Claude Code's paths."""
