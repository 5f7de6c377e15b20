"""Service-manager notifications (sd_notify), in a few lines of stdlib (DESIGN §8).

systemd hands a ``Type=notify`` service a datagram socket in ``NOTIFY_SOCKET`` (a filesystem
path, or ``@name`` for the Linux abstract namespace). The daemon tells it ``READY=1`` once it
is serving, ``STATUS=…`` for ``systemctl status``, ``WATCHDOG=1`` at half of ``WATCHDOG_USEC``,
``RELOADING=1`` around a config reload and ``STOPPING=1`` on shutdown.

Invariants:
- Without ``NOTIFY_SOCKET`` (a terminal, launchd, tests) every call is a no-op returning False.
- A failed send never raises into the daemon: it is logged at debug and reported as False.
  Losing a notification is better than losing the daemon; a missed ``WATCHDOG=1`` is exactly
  what the watchdog is there to notice.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Notifier", "watchdog_interval"]

log = logging.getLogger(__name__)


def _socket_address(raw: str) -> str | None:
    """The ``AF_UNIX`` address for a ``NOTIFY_SOCKET`` value; None when unusable here."""
    if raw.startswith("@"):
        return "\0" + raw[1:]
    if raw.startswith("/"):
        return raw
    # vsock: addresses (systemd ≥ 254, VMs) and anything else are not for us.
    return None


def watchdog_interval(
    env: Mapping[str, str] | None = None, *, pid: int | None = None
) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings: half of ``WATCHDOG_USEC``, or None when off.

    ``WATCHDOG_PID``, when set, names the process the watchdog is meant for; any other
    process (a child that inherited the environment) must not ping.
    """
    env = os.environ if env is None else env
    raw = env.get("WATCHDOG_USEC", "").strip()
    if not raw:
        return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    wpid = env.get("WATCHDOG_PID", "").strip()
    if wpid:
        try:
            if int(wpid) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    return usec / 2_000_000


def _format(fields: Mapping[str, object]) -> bytes:
    """``KEY=VALUE`` lines; newlines inside a value would start a bogus field, so they go."""
    lines = []
    for key, value in fields.items():
        text = str(int(value)) if isinstance(value, bool) else str(value)
        text = " ".join(text.splitlines())
        lines.append(f"{key}={text}")
    return ("\n".join(lines) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Notifier:
    """Sends sd_notify datagrams to ``address`` (None → disabled, every call a no-op).

    A datagram send blocks while the receiver's queue is full (a wedged manager, a test
    socket nobody reads); ``timeout`` bounds that so a ping can never hang the daemon.
    """

    address: str | None = None
    timeout: float = 1.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        env = os.environ if env is None else env
        raw = env.get("NOTIFY_SOCKET", "")
        return cls(_socket_address(raw) if raw else None)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, **fields: object) -> bool:
        """Send one datagram with ``fields`` in order; True when it was delivered."""
        if self.address is None or not fields:
            return False
        data = _format(fields)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.settimeout(self.timeout)
                sock.connect(self.address)
                sock.sendall(data)
        except OSError as exc:
            log.debug("sd_notify to %r failed: %s", self.address, exc)
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        if status is None:
            return self.notify(READY=1)
        return self.notify(READY=1, STATUS=status)

    def status(self, text: str) -> bool:
        return self.notify(STATUS=text)

    def watchdog(self) -> bool:
        return self.notify(WATCHDOG=1)

    def stopping(self, status: str | None = None) -> bool:
        if status is None:
            return self.notify(STOPPING=1)
        return self.notify(STOPPING=1, STATUS=status)

    def reloading(self) -> bool:
        """``RELOADING=1`` with the monotonic timestamp ``Type=notify-reload`` (systemd ≥253)
        requires; older managers ignore the extra field. Send ``ready()`` when done."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify(RELOADING=1, MONOTONIC_USEC=usec)
