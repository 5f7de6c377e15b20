"""One error hierarchy for the whole product, split by what the caller does about it.

::

    DreamdError                      base; str(e) is one line naming what and where
    ├── ConfigError                  bad configuration → exit 1 with the message
    ├── UsageError                   bad command-line use → exit 2
    ├── RecordError                  a record file or record value is malformed
    ├── StoreError                   a memory directory cannot be used as asked
    │   ├── UnmanagedError           directory has no manifest (run ``dreamd adopt``)
    │   ├── ConflictError            the base changed underneath: re-plan later
    │   │   └── NotApplied           a group commit left this change out after an earlier
    │   │                            one of the group failed: apply it again, alone
    │   └── UnsafeFileError          a path is a link, a FIFO, a device, too large, or
    │                                someone else's: refused, never followed (memory.fsutil)
    ├── LockError                    a lock or lease could not be taken
    │   ├── LockTimeout              the store lock was busy (also a TransientError)
    │   └── LeaseLost                our dream lease was broken / replaced (fencing)
    ├── TransientError               worth retrying later (model timeout, 429, 5xx, LockTimeout)
    └── PermanentError               never worth retrying (malformed job, outside roots)
        ├── JobRejected              a spool job failed validation
        └── ModelMisconfigured       the model backend refuses us (bad key or login, no such
                                     model, bad request, no CLI): fix [model], then retry
"""

from __future__ import annotations


class DreamdError(Exception):
    """Base class: every error dreamd raises on purpose."""


class ConfigError(DreamdError):
    pass


class UsageError(DreamdError):
    pass


class RecordError(DreamdError):
    pass


class StoreError(DreamdError):
    pass


class UnmanagedError(StoreError):
    pass


class ConflictError(StoreError):
    pass


class NotApplied(ConflictError):
    """A change of a group commit (``MemoryStore.commit_all(stop_at_failure=True)``) that was
    not applied because an earlier change of the group failed: nothing of it was written."""


class UnsafeFileError(StoreError):
    """A file or directory dreamd refuses to follow or read (:mod:`memory.fsutil`)."""


class LockError(DreamdError):
    pass




class LeaseLost(LockError):
    pass


class TransientError(DreamdError):
    pass


class LockTimeout(LockError, TransientError):
    """A lock stayed busy: try again later (a job is deferred, never failed, for it)."""


class PermanentError(DreamdError):
    pass


class JobRejected(PermanentError):
    pass


class ModelMisconfigured(PermanentError):
    """The configured model cannot be used as set up (HTTP 400/401/403/404, a missing login or
    CLI). Retrying the same call cannot help and the answer was never judged, so it is neither
    a transient failure nor a rejected answer: the job fails with this reason and the daemon
    shows it (``dreamd status``, ``dreamd doctor``) until a call succeeds again."""
