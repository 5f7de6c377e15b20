"""The store: record files, the manifest transaction, the derived index, history, adoption, locks and the three-way merge."""
