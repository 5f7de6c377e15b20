"""Offline extraction: the pipeline and its stages (clauses, distractors, facts, typing, rules)."""
