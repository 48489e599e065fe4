"""Runs every command of docs/tutorial.md against a real mentatd and checks
the output the tutorial shows, so that the tutorial stays true.

Run by CTest:
    tutorial_test.py --cli PATH --mentatd PATH [--stubs DIR]

What the test reads in docs/tutorial.md:
- A fenced block right after `<!-- tutorial: run -->` holds commands and
  their output, as on a terminal: a line starting with `$ ` is a command
  (continued over the next lines while a quote or a here-document is
  open, or a line ends with `\\`); the lines up to the next command are
  its output, stdout and stderr together. A command whose output shows an
  `ERROR:` line must exit non-zero, any other command zero.
- `<!-- tutorial: run python -->` is the same for commands that need the
  Python client's generated stubs (--stubs); without them those blocks are
  skipped and the test says so.
- A fenced block right after `<!-- tutorial: server -->` stops mentatd
  (the reader presses Ctrl-C), runs its shell lines, and starts mentatd
  again where a line says `make run`.
- Every other fenced block must not hold a `$ ` command: a command the
  test does not run would be a command nobody checks.

The commands run with bash, one by one, in a scratch directory that plays
the repository's top directory: build/client/mentat-cli,
build/server/mentatd, build/client/python/stubs and client/python are
links to the real ones, and data/ is the data directory of the mentatd the
test starts (`make run` stands for it: the same flags on a free port,
with MENTAT_ADDR pointing the tools at it). `export` commands carry over
to later commands. The tutorial's scratch directory /tmp/mentat-tutorial
becomes a directory of the test's own.

Output is compared line by line after trailing spaces are dropped, runs
of spaces become one (tables realign when a value's width changes) and
runs of dashes become one. Placeholders in the shown output match what
varies from run to run:
    <id>    an integer (entity and transaction ids)
    <time>  an instant, 2026-12-01T10:00:00.123456Z
    <n>     a number (sizes, durations)
    <any>   anything up to the end of the line
"""

import os
import re
import shlex
import subprocess
import sys
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TUTORIAL = os.path.join(REPO, "docs", "tutorial.md")
SCRATCH = "/tmp/mentat-tutorial"

PLACEHOLDERS = {
    "<id>": r"-?\d+",
    "<time>": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z",
    "<n>": r"-?\d+(?:\.\d+)?",
    "<any>": r".*",
}

STUBS = None


class Command:
    def __init__(self, line, text, output, python):
        self.line = line          # 1-based line in tutorial.md
        self.text = text          # the command, without "$ "
        self.output = output      # the lines shown after it
        self.python = python


class Block:
    def __init__(self, kind, line, lines):
        self.kind = kind          # "run", "run python", "server"
        self.line = line          # line of the first line inside the fence
        self.lines = lines


def read_blocks(path):
    """The fenced blocks of `path` with the marker before each (or None)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    marker = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^<!-- tutorial: (run|run python|server) -->$", line)
        if m:
            marker = m.group(1)
            i += 1
            continue
        if line.startswith("```"):
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise AssertionError("tutorial.md:%d: unclosed fence" % (i + 1))
            blocks.append(Block(marker, start + 1, lines[start:j]))
            marker = None
            i = j + 1
            continue
        if line.strip():
            marker = None  # a marker applies to the very next block
        i += 1
    return blocks


def command_is_open(text):
    """True while `text` needs more lines: an open quote, a trailing
    backslash or a here-document without its end line."""
    if text.endswith("\\"):
        return True
    first = text.split("\n", 1)[0]
    doc = re.search(r"<<-?\s*(['\"]?)(\w+)\1", first)
    if doc:
        body = text.split("\n")[1:]
        return doc.group(2) not in [l.strip() for l in body]
    try:
        shlex.split(text)
    except ValueError:
        return True
    return False


def parse_commands(block):
    """The commands of a run block with their shown output."""
    commands = []
    i = 0
    lines = block.lines
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if lines[i].strip():
                raise AssertionError(
                    "tutorial.md:%d: output before any command: %r" %
                    (block.line + i, lines[i]))
            i += 1
            continue
        start = i
        text = lines[i][2:]
        i += 1
        while command_is_open(text):
            if i == len(lines):
                raise AssertionError(
                    "tutorial.md:%d: command never ends" % (block.line + start))
            text += "\n" + lines[i]
            i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        while output and not output[-1].strip():
            output.pop()
        commands.append(Command(block.line + start, text, output,
                                block.kind == "run python"))
    return commands


def normalize(line):
    line = line.rstrip()
    line = re.sub(r" +", " ", line)
    return re.sub(r"-{2,}", "-", line)


def line_pattern(shown):
    """A regex for one shown output line, placeholders included."""
    parts = re.split(r"(<id>|<time>|<n>|<any>)", normalize(shown))
    out = []
    for p in parts:
        out.append(PLACEHOLDERS[p] if p in PLACEHOLDERS else re.escape(p))
    return re.compile("^" + "".join(out) + "$")


def mismatch(shown, actual):
    """None if `actual` (text) matches the shown lines, else the first
    differing line number (0-based) and a description."""
    got = actual.split("\n")
    while got and not got[-1].strip():
        got.pop()
    for k, shown_line in enumerate(shown):
        if k >= len(got):
            return k, "missing line: %r" % shown_line
        if not line_pattern(shown_line).match(normalize(got[k])):
            return k, "want %r\n   got %r" % (shown_line, got[k])
    if len(got) > len(shown):
        return len(shown), "extra line: %r" % got[len(shown)]
    return None


class TutorialTest(unittest.TestCase):

    def setUp(self):
        self.server = harness.Server()
        self.work = self.server.dir
        self.scratch = os.path.join(self.work, "mentat-tutorial")
        links = {
            "build/client/mentat-cli": harness.ARGS.cli,
            "build/server/mentatd": harness.ARGS.mentatd,
            "client/python": os.path.join(REPO, "client", "python"),
        }
        if STUBS:
            links["build/client/python/stubs"] = STUBS
        for rel, target in links.items():
            path = os.path.join(self.work, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(os.path.abspath(target), path)
        self.exports = []
        self.running = False

    def tearDown(self):
        self.server.cleanup()

    def env(self):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("MENTAT_")}
        env["HOME"] = self.work  # no history file of the user's
        if self.running:
            env["MENTAT_ADDR"] = self.server.addr
        return env

    def local(self, text):
        return text.replace(SCRATCH, self.scratch)

    def bash(self, text):
        script = "\n".join(self.exports + [self.local(text)])
        return subprocess.run(["bash", "-c", script], cwd=self.work,
                              env=self.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              timeout=120)

    def start_server(self):
        self.server.start()
        self.running = True

    def stop_server(self):
        self.server.stop()
        self.running = False

    def run_server_block(self, block):
        if self.running:
            self.stop_server()
        for k, line in enumerate(block.lines):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if text == "make run":
                self.start_server()
                continue
            r = self.bash(text)
            self.assertEqual(r.returncode, 0, "tutorial.md:%d: %s\n%s" %
                             (block.line + k, text, r.stdout))

    def run_command(self, cmd):
        r = self.bash(cmd.text)
        where = "tutorial.md:%d: $ %s" % (cmd.line, cmd.text)
        shown = [self.local(l) for l in cmd.output]
        fails = any(l.startswith("ERROR:") for l in shown)
        if fails:
            self.assertNotEqual(r.returncode, 0,
                                "%s\nsucceeded, but the tutorial shows an "
                                "error:\n%s" % (where, r.stdout))
        else:
            self.assertEqual(r.returncode, 0, "%s\nexit status %d:\n%s" %
                             (where, r.returncode, r.stdout))
        diff = mismatch(shown, r.stdout)
        if diff is not None:
            self.fail("%s\noutput line %d differs from the tutorial:\n   %s"
                      "\nwhole output:\n%s" % (where, diff[0] + 1, diff[1],
                                               r.stdout))
        if re.match(r"^export \w+=", cmd.text) and "\n" not in cmd.text:
            self.exports.append(cmd.text)

    def test_make_run_is_what_the_tutorial_says(self):
        """`make run` starts mentatd on ./data at 127.0.0.1:7878, which is
        what the test's stand-in for it does too (on a free port)."""
        r = subprocess.run(["make", "-n", "run"], cwd=REPO, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"server/mentatd --data-dir \./data "
                         r"--listen 127\.0\.0\.1:7878")

    def test_every_command_of_the_tutorial(self):
        blocks = read_blocks(TUTORIAL)
        ran = 0
        skipped = 0
        for block in blocks:
            if block.kind is None:
                for k, line in enumerate(block.lines):
                    self.assertFalse(
                        line.startswith("$ "),
                        "tutorial.md:%d: a command in a block without a "
                        "<!-- tutorial: ... --> marker is never run" %
                        (block.line + k))
                continue
            if block.kind == "server":
                self.run_server_block(block)
                continue
            for cmd in parse_commands(block):
                if cmd.python and not STUBS:
                    skipped += 1
                    continue
                self.assertTrue(self.running,
                                "tutorial.md:%d: a command before the "
                                "server starts" % cmd.line)
                self.run_command(cmd)
                ran += 1
        self.assertGreater(ran, 20, "the tutorial lost its commands")
        print("tutorial_test: %d commands ran%s" %
              (ran, ", %d Python ones skipped (no --stubs)" % skipped
               if skipped else ""), file=sys.stderr)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--stubs")
    known, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    if known.stubs and os.path.isdir(known.stubs):
        STUBS = known.stubs
    harness.parse_args()
    unittest.main()
