"""Offline dream plans: clause signatures, paraphrase detection and the planner."""
