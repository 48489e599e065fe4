"""Shared helpers for mentat-cli's tests: a mentatd on an ephemeral port
with a temporary data directory, and a way to run mentat-cli against it.

The binaries come from the command line (CTest passes the paths CMake
knows): --cli PATH --mentatd PATH.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ARGS = None


def parse_args():
    """Reads --cli/--mentatd and leaves the rest for unittest."""
    global ARGS
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--mentatd", required=True)
    ARGS, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    return ARGS


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """mentatd on 127.0.0.1:<free port> over a temporary data dir."""

    def __init__(self, extra_args=(), token=None):
        self.dir = tempfile.mkdtemp(prefix="mentat-cli-test-")
        self.extra_args = list(extra_args)
        self.token = token
        for a in self.extra_args:
            if a.startswith("--auth-token="):
                self.token = a.split("=", 1)[1]
        self.proc = None
        self.addr = None

    def start(self):
        for _ in range(5):
            port = free_port()
            self.addr = "127.0.0.1:%d" % port
            self.log = open(os.path.join(self.dir, "mentatd.log"), "ab")
            self.proc = subprocess.Popen(
                [ARGS.mentatd, "--data-dir=" + os.path.join(self.dir, "data"),
                 "--listen=" + self.addr, "--http=",
                 "--readers-per-node=2"] + self.extra_args,
                stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError("mentatd did not start; log in " + self.dir)

    def _wait_ready(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False  # the port was taken, or a crash
            cmd = [ARGS.cli, "--addr", self.addr, "-c", ".dbs"]
            if self.token:
                cmd += ["--token", self.token]
            r = subprocess.run(cmd, capture_output=True, timeout=30)
            if r.returncode == 0:
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()


def cli(server, *args, db=None, stdin=None, timeout=120, env=None):
    """Runs mentat-cli non-interactively; returns the CompletedProcess."""
    cmd = [ARGS.cli, "--addr", server.addr]
    if db is not None:
        cmd += ["--db", db]
    cmd += list(args)
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                          timeout=timeout, env=env)


SCHEMA = """[{:db/ident :user/email :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :user/name :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/title :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/state :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/priority :db/valueType :db.type/long
  :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :issue/assignee :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/label :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/many}
 {:db/ident :issue/created-at :db/valueType :db.type/instant
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/comment :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/many :db/isComponent true}
 {:db/ident :comment/text :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one}
 {:db/ident :label/name :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity
  :db/doc "a label's unique name"}
 {:db/ident :issue/estimate :db/valueType :db.type/double
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/key :db/valueType :db.type/uuid
  :db/cardinality :db.cardinality/one}
 {:db/ident :issue/parent :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/one}]
[{:db/ident :state/open} {:db/ident :state/closed}]
"""


def dataset(users=20, labels=5, issues=60):
    """EDN transactions: the schema, users, labels, then issues that refer
    to them by lookup ref, one transaction per line."""
    lines = [SCHEMA.strip()]
    lines.append("[" + " ".join(
        '{:user/email "u%d@example.com" :user/name "User %d"}' % (k, k)
        for k in range(users)) + "]")
    lines.append("[" + " ".join(
        '{:label/name "label-%d"}' % k for k in range(labels)) + "]")
    batch = []
    for i in range(issues):
        state = ":state/open" if i % 3 else ":state/closed"
        labels_of = " ".join('[:label/name "label-%d"]' % ((i + j) % labels)
                             for j in range(i % 3))
        comments = ""
        if i % 4 == 0:
            comments = (' :issue/comment [{:comment/text "first on %d"} '
                        '{:comment/text "second on %d"}]' % (i, i))
        label_part = (" :issue/label [%s]" % labels_of) if labels_of else ""
        batch.append(
            '{:db/id "i%d" :issue/title "Issue %d: %s" :issue/state %s '
            ':issue/priority %d :issue/assignee [:user/email "u%d@example.com"]'
            ' :issue/created-at #inst "2025-01-%02dT10:00:00Z"'
            ' :issue/estimate %d.5'
            ' :issue/key #uuid "00000000-0000-4000-8000-%012d"%s%s}'
            % (i, i, "crash" if i % 2 else 'typo, \\"quoted\\"', state,
               1 + i % 5, i % users, 1 + i % 28, i, i, label_part, comments))
        if i % 10 == 9:
            # A parent link inside the transaction, to an issue with no
            # unique attribute: the export must keep them together.
            batch.append('{:db/id "i%d" :issue/parent "i%d"}' % (i, i - 1))
            lines.append("[" + "\n ".join(batch) + "]")
            batch = []
    if batch:
        lines.append("[" + "\n ".join(batch) + "]")
    return "\n".join(lines) + "\n"
