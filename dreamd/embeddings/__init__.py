"""Sentence embeddings for recall: the packaged model's runtime and the daemon's query socket."""
