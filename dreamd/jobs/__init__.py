"""Jobs and dreams: the work protocol the daemon dispatches, its implementation, the dream gates (when a directory may dream) and dream batches."""
