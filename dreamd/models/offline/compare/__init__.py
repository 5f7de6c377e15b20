"""Comparing statements: clause signatures, gists and value kinds, read by extraction (corrections, supersession) and by the dream planner."""
