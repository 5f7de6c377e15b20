"""A torture client: one process submitting jobs through the real client API until its deadline.

``python -m tests.torture.clients --index I --incarnation K --spool S --dirs D1,D2,... \
    --ledger DIR --transcripts DIR --seed N --until EPOCH``

Each iteration picks one of: an extraction job from a real Claude Code transcript (sometimes
the same session again, so the extraction cursor is exercised; sometimes with a planted
secret appended as a user turn), a ``remember`` (unique name per client, incarnation and
sequence; now and then a paraphrase of an earlier one so dreams have something to merge;
sometimes a secret in the body), a ``forget`` of an earlier name (or of one that never
existed), or a consolidation request. After ``submit`` returns, one ``accepted`` line goes to
the client's ledger: that is the promise the checker holds the system to.

The harness SIGKILLs clients at random; a restarted client (next incarnation) reloads its own
ledger so its later ``forget`` jobs can name what earlier incarnations remembered.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import time
from pathlib import Path
from typing import Any

from memory.client import forget, remember, request_consolidation, submit
from memory.errors import DreamdError
from tests.torture.ledger import LedgerWriter, read_entries

TYPES = ("user", "feedback", "project", "reference")
BIG_TRANSCRIPT_BYTES = 1_000_000
"""Transcripts above this size are submitted rarely (they cost seconds of client CPU)."""

TOPICS = (
    ("prefers tabs for indentation in Go files", "Use tabs, not spaces, when editing Go code."),
    ("deploys go through the staging cluster first", "Every release is tried on staging first."),
    ("bug tracker lives in Linear project INGEST", "File ingestion bugs in Linear, project INGEST."),
    ("wants short commit messages in imperative mood", "Write commit subjects like 'Add x'."),
    ("the weekly sync is on Tuesdays at 10:00", "Schedule reviews around the Tuesday sync."),
    ("grafana board 'api-latency' tracks p99 latency", "Check the api-latency board after deploys."),
    ("avoid mocking the database in integration tests", "Integration tests hit a real Postgres."),
    ("the freeze for the mobile release starts Friday", "Merge nothing risky after Thursday."),
)
PARAPHRASE = ("User {}", "The user {}", "Noted: user {}", "Reminder - user {}")


def fake_secret(rng: random.Random) -> str:
    """A credential-shaped string the redactor knows (random, so each is unique)."""
    alnum = string.ascii_letters + string.digits
    shape = rng.randrange(4)
    if shape == 0:
        return "sk-ant-api03-" + "".join(rng.choices(alnum, k=48))
    if shape == 1:
        return "ghp_" + "".join(rng.choices(alnum, k=36))
    if shape == 2:
        return "AKIA" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=16))
    return "xoxb-" + "".join(rng.choices(string.digits, k=12)) + "-" + "".join(rng.choices(alnum, k=24))


def secret_turn(secret: str, session_id: str) -> str:
    """One Claude Code JSONL user line that mentions ``secret`` the way people do."""
    line = {
        "type": "user",
        "sessionId": session_id,
        "timestamp": "2026-11-29T10:00:00.000Z",
        "message": {
            "role": "user",
            "content": f"Remember that the deploy token for staging is {secret} and always use it.",
        },
    }
    return json.dumps(line)


class Client:
    def __init__(self, args: argparse.Namespace) -> None:
        self.index = args.index
        self.incarnation = args.incarnation
        self.spool = Path(args.spool)
        self.dirs = [d for d in args.dirs.split(",") if d]
        self.until = args.until
        self.rng = random.Random(f"{args.seed}-{args.index}-{args.incarnation}")
        self.ledger = LedgerWriter(Path(args.ledger) / f"client-{args.index}.jsonl", f"client-{args.index}")
        files = sorted(Path(args.transcripts).glob("*.jsonl"))
        self.small = [p for p in files if p.stat().st_size <= BIG_TRANSCRIPT_BYTES]
        self.big = [p for p in files if p.stat().st_size > BIG_TRANSCRIPT_BYTES]
        self.cache: dict[Path, str] = {}
        self.seq = 0
        self.remembered: dict[str, list[tuple[str, str]]] = {d: [] for d in self.dirs}
        self._reload()

    def _reload(self) -> None:
        """Names earlier incarnations of this client remembered (so forget can name them)."""
        for e in read_entries(Path(self.ledger.path).parent):
            if e.get("who") == self.ledger.who and e.get("op") == "accepted" and e.get("kind") == "remember":
                d = str(e.get("memory_dir"))
                if d in self.remembered:
                    self.remembered[d].append((str(e["name"]), str(e.get("description", ""))))

    def text(self, path: Path) -> str:
        if path not in self.cache:
            self.cache[path] = path.read_text(encoding="utf-8", errors="replace")
        return self.cache[path]

    def run(self) -> None:
        ops = ("extract", "remember", "forget", "consolidate")
        while time.time() < self.until:
            op = self.rng.choices(ops, weights=(4, 4, 1.5, 0.4))[0]
            memory_dir = self.rng.choice(self.dirs)
            try:
                getattr(self, op)(memory_dir)
            except DreamdError as exc:  # refused by the client API: never accepted
                self.ledger.write("refused", kind=op, memory_dir=memory_dir, error=str(exc))
            time.sleep(self.rng.uniform(0.1, 0.6))

    def extract(self, memory_dir: str) -> None:
        pool = self.big if self.big and self.rng.random() < 0.03 else self.small
        path = self.rng.choice(pool)
        content = self.text(path)
        roll = self.rng.random()
        if roll < 0.4:
            session: str | None = None  # the daemon takes the transcript's own session id
        elif roll < 0.8:
            session = f"c{self.index}-{path.stem[:40]}".replace("__", "-")  # same session again
        else:
            session = f"c{self.index}-{self.incarnation}-{self.seq}"
        secrets: list[str] = []
        if self.rng.random() < 0.3:
            secret = fake_secret(self.rng)
            secrets.append(secret)
            content = content.rstrip("\n") + "\n" + secret_turn(secret, session or "torture") + "\n"
        job_id = submit(content, memory_dir=memory_dir, session_id=session, spool=self.spool)
        self.ledger.write("accepted", kind="extract", job_id=job_id, memory_dir=memory_dir,
                          session_id=session, transcript=path.name, secrets=secrets)

    def remember(self, memory_dir: str) -> None:
        self.seq += 1
        name = f"c{self.index}-{self.incarnation}-{self.seq}"
        earlier = self.remembered[memory_dir]
        topic, how = self.rng.choice(TOPICS)
        if earlier and self.rng.random() < 0.3:
            description = self.rng.choice(PARAPHRASE).format(topic)  # a near-duplicate
        else:
            description = f"User {topic} (note {self.index}.{self.incarnation}.{self.seq})"
        body = f"{how}\n**Why:** said in session {self.seq}.\n**How to apply:** follow it."
        secrets: list[str] = []
        if self.rng.random() < 0.2:
            secret = fake_secret(self.rng)
            secrets.append(secret)
            body += f"\nThe staging API key is {secret} (do not share)."
        job_id = remember(memory_dir, name=name, type=self.rng.choice(TYPES),
                          description=description, body=body, spool=self.spool)
        earlier.append((name, description))
        self.ledger.write("accepted", kind="remember", job_id=job_id, memory_dir=memory_dir,
                          name=name, description=description, secrets=secrets)

    def forget(self, memory_dir: str) -> None:
        earlier = self.remembered[memory_dir]
        if earlier and self.rng.random() < 0.85:
            names = [self.rng.choice(earlier)[0]]
        else:
            names = [f"never-{self.index}-{self.rng.randrange(10**6)}"]
        job_id = forget(memory_dir, names, spool=self.spool)
        self.ledger.write("accepted", kind="forget", job_id=job_id, memory_dir=memory_dir, names=names)

    def consolidate(self, memory_dir: str) -> None:
        force = self.rng.random() < 0.5
        job_id = request_consolidation(memory_dir, force=force, spool=self.spool)
        self.ledger.write("accepted", kind="consolidate", job_id=job_id, memory_dir=memory_dir, force=force)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.torture.clients")
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--incarnation", type=int, default=0)
    parser.add_argument("--spool", required=True)
    parser.add_argument("--dirs", required=True, help="comma-separated memory directories")
    parser.add_argument("--ledger", required=True, help="ledger directory")
    parser.add_argument("--transcripts", required=True)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--until", type=float, required=True, help="epoch seconds to stop at")
    args: Any = parser.parse_args(argv)
    Client(args).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
