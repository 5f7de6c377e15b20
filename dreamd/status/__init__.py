"""What ``dreamd status`` reports — the daemon, the model, the spool, every directory, the
console — as one JSON-ready value and its text rendering; ``doctor`` and the console read the
same facts from here."""
