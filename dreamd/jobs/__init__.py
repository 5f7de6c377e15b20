"""Jobs and dreams: the work protocol the daemon dispatches, its implementation, and dream batches."""
