"""A mentatd for the Python tests: on 127.0.0.1:<free port> over a
temporary data dir, stopped with SIGTERM. The binary comes from
--mentatd PATH on the test's command line (CTest passes it)."""

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


def parse_args(*extra):
    """Reads --mentatd PATH (and `extra` flag names) and leaves the rest of
    the command line for unittest."""
    global ARGS
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--mentatd", required=True)
    for name in extra:
        parser.add_argument(name)
    ARGS, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    return ARGS


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mentatd:

    def __init__(self, *extra_args, http=False):
        self.dir = tempfile.mkdtemp(prefix="mentat-py-test-")
        self.extra_args = list(extra_args)
        self.http = http
        self.proc = None
        self.addr = None
        self.http_addr = None
        self.log = None

    def start(self, ready):
        """Starts it and waits until ready(addr) returns true (a first call
        that succeeds). Retries on another port if the port was taken."""
        for _ in range(5):
            self.addr = "127.0.0.1:%d" % free_port()
            if self.http:
                self.http_addr = "127.0.0.1:%d" % free_port()
            if self._spawn_and_wait(ready):
                return self
            self.stop()
        raise RuntimeError("mentatd did not start; log in " + self.dir)

    def kill(self):
        """SIGKILL: connections drop as in a crash."""
        self.proc.kill()
        self.proc.wait()
        self.proc = None
        self.log.close()
        self.log = None

    def restart(self, ready):
        """Starts it again on the same address and data dir."""
        if self._spawn_and_wait(ready):
            return self
        raise RuntimeError("mentatd did not restart; log in " + self.dir)

    def _spawn_and_wait(self, ready):
        """Runs mentatd on self.addr (and self.http_addr, if any); true once
        ready(addr) returns true, false if it exits or 30 s pass first."""
        args = [ARGS.mentatd, "--data-dir=" + os.path.join(self.dir, "data"),
                "--listen=" + self.addr, "--readers-per-node=2",
                "--http=" + (self.http_addr or "")]
        self.log = open(os.path.join(self.dir, "mentatd.log"), "ab")
        self.proc = subprocess.Popen(args + self.extra_args, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline and self.proc.poll() is None:
            try:
                if ready(self.addr):
                    return True
            except Exception:  # not listening yet
                pass
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
        if self.log is not None:
            self.log.close()
            self.log = None

    def log_text(self):
        with open(os.path.join(self.dir, "mentatd.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
