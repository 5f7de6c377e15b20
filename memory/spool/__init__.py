"""The spool: the Maildir queue transcripts reach the daemon through, and the job file format."""
