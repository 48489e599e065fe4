"""mentat-cli at a terminal, through a pseudo-terminal: a multi-line query
and its table, history recall (and the history file), tab completion,
Ctrl-C discarding a half-typed statement, Ctrl-C cancelling a long query
with the prompt coming back, and Ctrl-D. Run by CTest:
cli_pty_test.py --cli PATH --mentatd PATH."""

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import tempfile
import termios
import time
import unittest

import harness
from harness import cli

PROMPT = "default=> "
# Colours, cursor moves and bracketed-paste switches, which the checks
# ignore.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]")


class Terminal:
    """mentat-cli on a pty; everything it writes is kept in `seen`."""

    def __init__(self, server, home, pager="", rows=0):
        env = dict(os.environ, HOME=home, TERM="xterm", PAGER=pager,
                   MENTAT_HISTORY=os.path.join(home, ".mentat_history"),
                   INPUTRC="/dev/null", COLUMNS="120", LINES="40")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            if rows:
                fcntl.ioctl(0, termios.TIOCSWINSZ,
                            struct.pack("HHHH", rows, 100, 0, 0))
            os.execve(harness.ARGS.cli,
                      [harness.ARGS.cli, "--addr", server.addr], env)
        self.raw = ""
        self.seen = ""
        self.mark = 0

    def read_until(self, pattern, timeout=20):
        """Waits until `pattern` (a regex) appears in the output after the
        mark; moves the mark past it."""
        deadline = time.time() + timeout
        regex = re.compile(pattern)
        while True:
            m = regex.search(self.seen, self.mark)
            if m:
                self.mark = m.end()
                return m
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no %r in output:\n%s" %
                                     (pattern, self.seen[-3000:]))
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError("mentat-cli exited; output:\n" +
                                         self.seen[-3000:])
                self.raw += data.decode("utf-8", "replace")
                self.seen = ANSI.sub("", self.raw)

    def send(self, text):
        os.write(self.fd, text.encode())

    def wait(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if ready:
                    self.seen += os.read(self.fd, 65536).decode("utf-8",
                                                                 "replace")
            except OSError:
                pass
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("mentat-cli did not exit")


class PtyTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server().start()
        cls.home = tempfile.mkdtemp(prefix="mentat-cli-home-")
        data = os.path.join(cls.home, "data.edn")
        with open(data, "w") as f:
            f.write(harness.dataset())
            f.write('[{:db/ident :n/v :db/valueType :db.type/long '
                    ':db/cardinality :db.cardinality/one}]\n')
            for chunk in range(20):
                f.write("[" + " ".join("{:n/v %d}" % (chunk * 1000 + k)
                                       for k in range(1000)) + "]\n")
        r = cli(cls.server, "-c", ".import " + data)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.home, ignore_errors=True)

    def test_session(self):
        t = Terminal(self.server, self.home)
        t.read_until(r"Connected to mentatd at 127\.0\.0\.1:\d+, "
                     r'database "default"')
        t.read_until(PROMPT)

        # A query over two lines: the second prompt continues the first.
        t.send('[:find ?name\r')
        t.read_until("default-> ")
        t.send(' :where [?u :user/email "u4@example.com"] [?u :user/name ?name]]\r')
        t.read_until(r"\?name\s*\r\n-+\r\n User 4\r\n\(1 row\)")
        t.read_until(PROMPT)

        # History: Up brings the whole two-line statement back.
        t.send("\x1b[A")
        t.read_until(r"u4@example\.com")
        t.send("\r")
        t.read_until(r"User 4\r\n\(1 row\)")
        t.read_until(PROMPT)

        # Ctrl-C drops a half-typed statement and gives a fresh prompt.
        t.send("[:find ?x\r")
        t.read_until("default-> ")
        t.send("\x03")
        t.read_until(r"\^C\r\n" + re.escape(PROMPT))
        t.send(".dbs\r")
        t.read_until(r"default")
        t.read_until(PROMPT)

        # Tab completes commands and attribute idents from the schema.
        t.send(".sche\t :label\r")
        t.read_until(r"a label's unique name")
        t.read_until(PROMPT)
        t.send("[:find ?n :where [_ :label/na\t?n]]\r")
        t.read_until(r"label-4")
        t.read_until(PROMPT)

        # Ctrl-C cancels a long query and the prompt comes back.
        t.send("[:find (count ?a) :where [?a :n/v ?x] [?b :n/v ?y] "
               "[(< ?x ?y)]]\r")
        time.sleep(1.0)
        start = time.time()
        t.send("\x03")
        t.read_until(r"(?i)cancel")
        t.read_until(PROMPT)
        self.assertLess(time.time() - start, 10)
        t.send(".dbs\r")
        t.read_until(r"default")
        t.read_until(PROMPT)

        # Ctrl-D exits cleanly.
        t.send("\x04")
        self.assertEqual(t.wait(), 0)

        with open(os.path.join(self.home, ".mentat_history")) as f:
            history = f.read()
        self.assertIn('[:find ?name\\n :where [?u :user/email '
                      '"u4@example.com"]', history)
        self.assertIn(".dbs", history)

    def test_long_results_page(self):
        paged = os.path.join(self.home, "paged.txt")
        t = Terminal(self.server, self.home, pager="cat > " + paged, rows=24)
        t.read_until(PROMPT)
        # 20 users: 24 lines with the header and count, more than fit.
        t.send("[:find ?n :where [_ :user/name ?n]]\r")
        t.read_until(PROMPT)
        t.send("[:find ?n :where [_ :label/name ?n]]\r")
        t.read_until(r"label-0[\s\S]*\(5 rows\)")
        t.read_until(PROMPT)
        t.send(".pager off\r")
        t.read_until(PROMPT)
        t.send("[:find ?n :where [_ :user/name ?n]]\r")
        t.read_until(r"\(20 rows\)")
        t.read_until(PROMPT)
        t.send("\\q\r")
        self.assertEqual(t.wait(), 0)
        with open(paged) as f:
            text = f.read()
        self.assertIn("(20 rows)", text)
        self.assertIn("User 19", text)
        self.assertNotIn("label-0", text)

    def test_history_survives_restart(self):
        t = Terminal(self.server, self.home)
        t.read_until(PROMPT)
        t.send(".schema :user\r")
        t.read_until(r":user/email")
        t.read_until(PROMPT)
        t.send("\x04")
        self.assertEqual(t.wait(), 0)
        t = Terminal(self.server, self.home)
        t.read_until(PROMPT)
        t.send("\x1b[A\r")
        t.read_until(r":user/email")
        t.read_until(PROMPT)
        t.send("\\q\r")
        self.assertEqual(t.wait(), 0)


if __name__ == "__main__":
    harness.parse_args()
    unittest.main(verbosity=2)
