"""Recall: what a word is, the per-directory index, lexical and model selection, and the block handed to an agent."""
