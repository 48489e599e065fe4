"""mentat-cli in scripting mode against a live mentatd: every command, the
output formats, error positions and exit codes, and an import/export round
trip. Run by CTest: cli_test.py --cli PATH --mentatd PATH."""

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import harness
from harness import cli


class CliTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server().start()
        cls.tmp = tempfile.mkdtemp(prefix="mentat-cli-files-")
        cls.data = os.path.join(cls.tmp, "issues.edn")
        with open(cls.data, "w") as f:
            f.write(harness.dataset())
        r = cli(cls.server, "-c", ".import " + cls.data)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ok(self, *args, **kw):
        r = cli(self.server, *args, **kw)
        self.assertEqual(r.returncode, 0, "stdout: %s\nstderr: %s" %
                         (r.stdout, r.stderr))
        return r.stdout

    def fails(self, *args, **kw):
        r = cli(self.server, *args, **kw)
        self.assertEqual(r.returncode, 1, "stdout: %s\nstderr: %s" %
                         (r.stdout, r.stderr))
        return r

    # --- queries and formats ---------------------------------------------

    def test_query_table(self):
        out = self.ok("-c", '.q [:find ?name :in $ ?email :where '
                      '[?u :user/email ?email] [?u :user/name ?name]] '
                      '"u3@example.com"')
        self.assertEqual(out, " ?name\n--------\n User 3\n(1 row)\n")

    def test_plain_edn_query_over_lines(self):
        out = self.ok("-c", "[:find ?e ?name\n :where [?e :user/name ?name]\n"
                      "         [?e :user/email \"u1@example.com\"]]")
        lines = out.splitlines()
        self.assertRegex(lines[0], r"^\s+\?e \| \?name$")
        self.assertRegex(lines[2], r"^ \d+ \| User 1$")
        self.assertEqual(lines[-1], "(1 row)")

    def test_map_query_and_find_shapes(self):
        out = self.ok("--format", "edn", "-c",
                      "{:find [?t .] :where [[?i :issue/title ?t] "
                      "[?i :issue/priority 5] [?i :issue/state :state/closed]]}")
        self.assertRegex(out, r'^"Issue \d+: .*"\n$')
        out = self.ok("--format", "json", "-c",
                      "[:find [?p ...] :where [_ :issue/priority ?p]]")
        self.assertEqual(sorted(json.loads(out)), [1, 2, 3, 4, 5])
        out = self.ok("--format", "edn", "-c",
                      "[:find ?n . :where [?l :label/name ?n] "
                      "[?l :label/name \"nope\"]]")
        self.assertEqual(out, "nil\n")

    def test_csv_quotes_per_rfc4180(self):
        out = self.ok("--format", "csv", "-c",
                      '[:find ?t :where [?i :issue/title ?t] '
                      '[?i :issue/priority 1] [?i :issue/state :state/closed]]')
        rows = list(csv.reader(io.StringIO(out)))
        self.assertEqual(rows[0], ["?t"])
        self.assertTrue(any('typo, "quoted"' in r[0] for r in rows[1:]), out)
        self.assertIn('"Issue', out)
        # -t drops the header for pipelines
        out = self.ok("--format", "csv", "-t", "-c",
                      "[:find ?n :where [_ :label/name ?n]]")
        self.assertEqual(sorted(out.split()),
                         ["label-%d" % k for k in range(5)])

    def test_json_rows_are_objects(self):
        out = self.ok("--format", "json", "-c",
                      '[:find ?e ?name ?at :where [?e :issue/assignee ?u] '
                      '[?u :user/name ?name] [?e :issue/created-at ?at] '
                      '[?e :issue/priority 2]]')
        rows = json.loads(out)
        self.assertTrue(rows)
        self.assertEqual(set(rows[0]), {"e", "name", "at"})
        self.assertIn("#inst", rows[0]["at"])

    def test_query_inputs_collection(self):
        out = self.ok("--format", "csv", "-t", "-c",
                      '.q [:find ?name :in $ [?email ...] :where '
                      '[?u :user/email ?email] [?u :user/name ?name]] '
                      '["u1@example.com" "u2@example.com"]')
        self.assertEqual(sorted(out.split("\n")[:-1]), ["User 1", "User 2"])

    # --- transactions, pull, bases, log --------------------------------------

    def test_transact_pull_and_bases(self):
        self.ok("-c", ".create hist")
        self.ok("--db", "hist", "-c",
                '.t [{:db/ident :thing/name :db/valueType :db.type/string '
                ':db/cardinality :db.cardinality/one :db/unique '
                ':db.unique/identity} {:db/ident :thing/size '
                ':db/valueType :db.type/long :db/cardinality '
                ':db.cardinality/one}]')
        out = self.ok("--db", "hist", "--format", "json", "-c",
                      '[{:db/id "a" :thing/name "box" :thing/size 1}]')
        report = json.loads(out)
        t1 = report["t"]
        self.assertIn("a", report["tempids"])
        self.ok("--db", "hist", "-c",
                '.t [[:db/add [:thing/name "box"] :thing/size 2]]')
        pulled = self.ok("--db", "hist", "-c",
                         '.pull [:thing/name :thing/size] [:thing/name "box"]')
        self.assertIn(":thing/size 2", pulled)
        pulled = self.ok("--db", "hist", "-c", ".as-of %d" % t1, "-c",
                         '.pull [:thing/size] [:thing/name "box"]')
        self.assertIn(":thing/size 1", pulled)
        q = "[:find ?s :where [?e :thing/size ?s]]"
        out = self.ok("--db", "hist", "--format", "csv", "-t",
                      "-c", ".since %d" % t1, "-c", q)
        self.assertEqual(out, "2\n")
        out = self.ok("--db", "hist", "--format", "csv", "-t",
                      "-c", ".history", "-c",
                      "[:find ?s ?added :where [?e :thing/size ?s ?tx ?added]]")
        self.assertEqual(sorted(out.split()),
                         ["1,false", "1,true", "2,true"])
        out = self.ok("--db", "hist", "--format", "csv", "-t",
                      "-c", ".as-of %d" % t1, "-c", ".latest", "-c", q)
        self.assertEqual(out, "2\n")
        log = self.ok("--db", "hist", "--format", "csv", "-c",
                      ".log %d" % t1)
        rows = list(csv.reader(io.StringIO(log)))
        self.assertEqual(rows[0], ["t", "tx-instant", "e", "a", "v", "op"])
        self.assertIn([":thing/size", "1", "-"],
                      [r[3:] for r in rows[1:]])
        self.assertIn([":thing/size", "2", "+"],
                      [r[3:] for r in rows[1:]])
        log = self.ok("--db", "hist", "--format", "csv", "-t", "-c",
                      ".log %d %d" % (t1, t1 + 1))
        self.assertNotIn(":thing/size,2", log)

    def test_with_and_dry_run(self):
        self.ok("-c", ".create spec")
        db = ("--db", "spec")
        self.ok(*db, "-c",
                '.t [{:db/ident :w/name :db/valueType :db.type/string '
                ':db/cardinality :db.cardinality/one :db/unique '
                ':db.unique/identity}]')
        self.ok(*db, "-c", '[{:w/name "a"}]')
        out = self.ok(*db, "-c", '.dry-run [{:db/id "b" :w/name "b"}]')
        self.assertIn("Dry run, nothing committed: tx", out)
        self.assertIn('"b" ->', out)
        q = "[:find ?n :where [_ :w/name ?n]]"
        csv_rows = ("--format", "csv", "-t")
        self.assertEqual(self.ok(*db, *csv_rows, "-c", q), "a\n")
        out = self.ok(*db, *csv_rows, "-c",
                      '.with [{:w/name "b"}] [{:w/name "c"}]', "-c", q)
        self.assertEqual(sorted(out.split()), ["a", "b", "c"])
        pulled = self.ok(*db, "-c", '.with [{:w/name "b"}]', "-c",
                         '.pull [:w/name] [:w/name "b"]')
        self.assertIn('"b"', pulled)
        # .explain plans against the speculative value: :w/size exists
        # only there.
        size = ('.with [{:db/ident :w/size :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one}]')
        plan = self.ok(*db, "-c", size, "-c",
                       ".explain [:find ?s :where [_ :w/size ?s]]")
        self.assertIn(":w/size", plan)
        self.fails(*db, "-c", ".explain [:find ?s :where [_ :w/size ?s]]")
        out = self.ok(*db, *csv_rows, "-c", '.with [{:w/name "b"}]',
                      "-c", ".with", "-c", q)
        self.assertEqual(out, "a\n")
        r = self.fails(*db, "-c", '.with [[:db/add "x" :w/nope 1]]',
                       "-c", q)
        self.assertIn("with_tx_data[0]", r.stderr)
        self.assertIn(":w/nope", r.stderr)

    def test_deep_pull_fails_with_exit_1(self):
        # A chain through a many-valued ref: 20 levels nest past the 100
        # protobuf messages clients parse. The server refuses it; the shell
        # says so and exits 1, for .pull and for a pull in a query (which
        # once printed nothing and exited 0).
        self.ok("-c", ".create deep")
        self.ok("--db", "deep", "-c",
                ".t [{:db/ident :node/name :db/valueType :db.type/string "
                ":db/cardinality :db.cardinality/one :db/unique "
                ":db.unique/identity} {:db/ident :node/edge :db/valueType "
                ":db.type/ref :db/cardinality :db.cardinality/many}]")
        self.ok("--db", "deep", "-c", "[" + " ".join(
            '{:db/id "c%d" :node/name "c%d"%s}' %
            (i, i, ' :node/edge ["c%d"]' % (i + 1) if i < 59 else "")
            for i in range(60)) + "]")
        for command in ('.pull [:node/name {:node/edge 20}] [:node/name "c0"]',
                        '[:find (pull ?e [:node/name {:node/edge 20}]) '
                        ':where [?e :node/name "c0"]]'):
            r = self.fails("--db", "deep", "-c", command)
            self.assertEqual(r.stdout, "")
            self.assertIn("nests too deep to send", r.stderr)
        out = self.ok("--db", "deep", "--format", "edn", "-c",
                      '.pull [:node/name {:node/edge 15}] [:node/name "c0"]')
        self.assertIn('"c15"', out)
        self.assertNotIn('"c16"', out)

    def test_results_that_cannot_be_written_fail(self):
        # A full disk under stdout or .output loses the results: exit 1
        # with the reason, never 0 (every path goes through OutputSink).
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        query = "[:find ?e :where [?e :db/ident _]]"
        for command in (query, ".dbs", ".schema", ".pull [*] :db/ident",
                        ".log 1000"):
            with open("/dev/full", "w") as full:
                r = subprocess.run(
                    [harness.ARGS.cli, "--addr", self.server.addr, "-c",
                     command], stdout=full, stderr=subprocess.PIPE,
                    text=True, timeout=120)
            self.assertEqual(r.returncode, 1, command + ": " + r.stderr)
            self.assertIn("No space left on device", r.stderr)
        r = self.fails("-c", ".output /dev/full", "-c", query)
        self.assertIn("cannot write the results: No space left on device",
                      r.stderr)
        # A reader that goes away (`| head`) only stops the output.
        p = subprocess.Popen([harness.ARGS.cli, "--addr", self.server.addr,
                              "-c", query], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdout.close()
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)

    def test_databases(self):
        self.ok("-c", ".create scratch")
        out = self.ok("--format", "csv", "-c", ".dbs")
        names = [r[1] for r in csv.reader(io.StringIO(out))][1:]
        self.assertIn("scratch", names)
        self.assertIn("default", names)
        self.ok("-c", ".use scratch", "-c", "[:find ?e :where [?e :db/ident :db/ident]]")
        r = self.fails("-c", ".create scratch")
        self.assertIn("ERROR", r.stderr)
        self.ok("-c", ".drop scratch")
        r = self.fails("-c", ".use scratch")
        self.assertIn("does not exist", r.stderr)
        r = cli(self.server, "--db", "nosuch", "-c", ".dbs")
        self.assertEqual(r.returncode, 2)

    def test_schema_stats_explain_help(self):
        out = self.ok("-c", ".schema")
        self.assertIn(":user/email", out)
        self.assertIn("db.unique/identity", out)
        self.assertNotIn(":db/ident ", out)
        out = self.ok("-c", ".schema :label")
        self.assertIn("a label's unique name", out)
        self.assertNotIn(":user/email", out)
        self.fails("-c", ".schema :nope/nothing")
        out = self.ok("-c", ".stats")
        self.assertIn(":issue/title", out)
        out = self.ok("--format", "csv", "-t", "-c", ".stats :issue/priority")
        self.assertTrue(out.startswith(":issue/priority,"), out)
        out = self.ok("-c", ".explain [:find ?e :where [?e :user/email \"u1@example.com\"]]")
        self.assertTrue(out.strip())
        out = self.ok("-c", ".help")
        for name in ("q", "t", "pull", "schema", "as-of", "since", "history",
                     "latest", "explain", "timer", "format", "output",
                     "import", "export", "dbs", "use", "create", "stats",
                     "log", "watch", "read"):
            self.assertRegex(out, r"(?m)^\.%s\b" % re.escape(name))

    def test_settings_output_and_read(self):
        target = os.path.join(self.tmp, "out.csv")
        script = os.path.join(self.tmp, "script.edn")
        with open(script, "w") as f:
            f.write("; a script\n.format csv\n.output %s\n"
                    "[:find ?n\n :where [_ :label/name ?n]]\n.output\n"
                    ".timer on\n.timer off\n.pager off\n" % target)
        out = self.ok("-c", ".read " + script)
        self.assertEqual(out, "")
        with open(target) as f:
            self.assertEqual(f.read().split()[0], "?n")
        r = cli(self.server, "-c", ".timer on", "-c", ".dbs")
        self.assertIn("Time: ", r.stderr)
        self.assertEqual(self.ok("-c", "\\q", "-c", ".dbs"), "")
        self.assertEqual(self.ok("-c", ".quit", "-c", ".dbs"), "")
        self.fails("-c", ".format xml")
        self.fails("-c", ".timer maybe")

    def test_script_from_file_and_stdin(self):
        script = os.path.join(self.tmp, "s2.edn")
        with open(script, "w") as f:
            f.write('.format csv\n.q [:find ?n :in $ ?e :where\n'
                    '    [?u :user/email ?e] [?u :user/name ?n]] '
                    '"u7@example.com"\n')
        self.assertEqual(self.ok("-f", script), "?n\nUser 7\n")
        self.assertEqual(self.ok(stdin=read(script)), "?n\nUser 7\n")

    # --- errors ---------------------------------------------------------------

    def test_basis_refuses_instants_that_name_no_time(self):
        # Issue 16 item 16: the shell's own date parser checked only
        # day <= 31, so 2025-02-31 silently became March 3.
        r = self.fails("-c", ".as-of 2025-02-31", "-c", ".dbs")
        self.assertEqual(r.stdout, "")
        self.assertIn('invalid instant "2025-02-31": day 31 is out of '
                      'range (1-28)', r.stderr)
        for bad, why in (("2023-02-29", "day 29 is out of range (1-28)"),
                         ("2025-13-01", "month 13 is out of range"),
                         ("2025-01-01T24:00:00Z", "hour 24 is out of range"),
                         ("2016-12-31T23:59:60Z", "leap seconds"),
                         ("2025-01-01T00:00:00+24:00", "offset hour 24"),
                         ('#inst "2025-04-31"', "day 31 is out of range")):
            r = self.fails("-c", ".since " + bad)
            self.assertIn(why, r.stderr, bad)
        # Real dates, leap days included, still set the basis.
        self.ok("-c", ".as-of 2024-02-29", "-c", ".latest")
        self.ok("-c", '.as-of #inst "2000-02-29T23:59:59Z"', "-c", ".latest")

    def test_error_positions_and_exit_codes(self):
        r = self.fails("-c", '[:find ?e :where [?e :user/emial "x"]]')
        self.assertEqual(r.stdout, "")
        self.assertIn("ERROR:", r.stderr)
        lines = r.stderr.splitlines()
        caret = [l for l in lines if l.strip() == "^"]
        if caret:  # the server gave a position: the caret sits under it
            src = [l for l in lines if l.startswith("LINE 1: ")][0]
            col = caret[0].index("^")
            # The server names the pattern or the attribute in it.
            self.assertIn(src[col:col + 2], ("[?", ":u"), r.stderr)
        r = self.fails("-c", "[:find ?e :where [?e :user/name]")
        self.assertIn("never closed", r.stderr)
        r = self.fails("-c", ".nosuch")
        self.assertIn("unknown command .nosuch", r.stderr)
        r = self.fails("-c", "{:user/name 1}")
        self.assertIn("expected a query", r.stderr)
        # The first error stops a script; --keep-going runs the rest.
        r = self.fails("-c", ".nosuch", "-c", ".dbs")
        self.assertEqual(r.stdout, "")
        r = self.fails("--keep-going", "-c", ".nosuch", "-c", ".dbs")
        self.assertIn("default", r.stdout)
        script = os.path.join(self.tmp, "bad.edn")
        with open(script, "w") as f:
            f.write(".dbs\n\n[:find ?e\n :where [?e :no/such ?x]]\n.dbs\n")
        r = self.fails("-f", script)
        self.assertRegex(r.stderr, r"bad.edn:3: ")
        self.assertEqual(r.stdout.count("default"), 1)
        r = self.fails("-c", '.t [[:db/add "x" :user/name 42]]')
        self.assertIn("ERROR", r.stderr)
        r = cli(self.server, "--bogus")
        self.assertEqual(r.returncode, 2)
        r = subprocess.run([harness.ARGS.cli, "--addr",
                            "127.0.0.1:%d" % harness.free_port(), "-c", ".dbs"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot connect", r.stderr)
        self.assertIn("make run", r.stderr)

    def test_psql_and_sqlite_habits(self):
        self.ok("-c", ".create habits")
        self.assertIn("habits", self.ok("-c", "\\l"))
        self.assertIn("habits", self.ok("-c", ".databases"))
        # \c switches, \d describes the schema (one attribute too).
        out = self.ok("-c", "\\c habits", "-c",
                    ".t [{:db/ident :h/name :db/valueType :db.type/string "
                    ":db/cardinality :db.cardinality/one}]",
                    "-c", "\\d", "-c", "\\d :h/name", "-c", ".tables")
        self.assertGreaterEqual(out.count(":h/name"), 3)
        out = self.ok("-c", ".mode json", "-c", ".q [:find ?x :in ?x] 42")
        self.assertIn("42", out)
        self.assertEqual(out, self.ok("-c", ".format json", "-c",
                                      ".q [:find ?x :in ?x] 42"))
        # \x shows rows as records, as psql's; .expanded off goes back.
        out = self.ok("-c", "\\x", "-c", ".q [:find ?x ?y :in ?x ?y] 42 \"a\"")
        self.assertIn("-[ RECORD 1 ]", out)
        self.assertIn("?x | 42", out)
        self.assertIn("?y | a", out)
        out = self.ok("-c", ".expanded on", "-c", ".expanded off", "-c",
                      ".q [:find ?x ?y :in ?x ?y] 42 \"a\"")
        self.assertNotIn("RECORD", out)
        # A typo of a dot command gets the closest one; a psql command that
        # has no twin says which do.
        r = self.fails("-c", ".schem")
        self.assertIn("did you mean .schema?", r.stderr)
        r = self.fails("-c", "\\dt")
        self.assertIn("unknown command \\dt", r.stderr)
        self.assertIn("\\l", r.stderr)

    # --- watch and cancellation ----------------------------------------------

    def test_watch_follows_transactions(self):
        self.ok("-c", ".create watched", "-c", ".use watched", "-c",
                '.t [{:db/ident :w/n :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one}]')
        proc = subprocess.Popen(
            [harness.ARGS.cli, "--addr", self.server.addr, "--db", "watched",
             "--format", "json", "-c", ".watch"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = ""
            deadline = time.time() + 30
            while time.time() < deadline and not line:
                self.ok("--db", "watched", "-c", '[{:w/n 7}]')
                import select
                ready, _, _ = select.select([proc.stdout], [], [], 0.5)
                if ready:
                    line = proc.stdout.readline()
            report = json.loads(line)
            self.assertIn("tx", report)
            self.assertIn([":w/n", 7], [d[1:3] for d in report["datoms"]])
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=10)

    def test_sigint_cancels_a_long_query(self):
        self.ok("-c", ".create big")
        self.ok("--db", "big", "-c",
                '.t [{:db/ident :n/v :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one}]')
        path = os.path.join(self.tmp, "big.edn")
        with open(path, "w") as f:
            for chunk in range(20):
                f.write("[" + " ".join("{:n/v %d}" % (chunk * 1000 + k)
                                       for k in range(1000)) + "]\n")
        self.ok("--db", "big", "-c", ".import " + path)
        proc = subprocess.Popen(
            [harness.ARGS.cli, "--addr", self.server.addr, "--db", "big",
             "-c", "[:find (count ?a) :where [?a :n/v ?x] [?b :n/v ?y] "
             "[(< ?x ?y)]]"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        start = time.time()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        self.assertLess(time.time() - start, 10)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("cancel", err.lower())

    # --- import / export --------------------------------------------------------

    def test_import_export_round_trip(self):
        exported = os.path.join(self.tmp, "export.edn")
        self.ok("-c", ".export " + exported)
        self.ok("-c", ".create copy")
        self.ok("--db", "copy", "-c", ".import " + exported)
        again = os.path.join(self.tmp, "export2.edn")
        self.ok("--db", "copy", "-c", ".export " + again)
        self.assertEqual(normalize(read(exported)), normalize(read(again)))
        # Same datoms per user attribute, as the server counts them
        # (transaction entities differ: an import makes its own).
        def user_stats(db):
            out = self.ok("--db", db, "--format", "csv", "-t", "-c", ".stats")
            return sorted(l for l in out.splitlines()
                          if not l.startswith((":db", ":mentat")))
        self.assertEqual(user_stats("default"), user_stats("copy"))
        titles = "[:find ?t ?n :where [?i :issue/title ?t] [?i :issue/assignee ?u] [?u :user/name ?n]]"
        self.assertEqual(
            sorted(self.ok("--format", "csv", "-c", titles).splitlines()),
            sorted(self.ok("--db", "copy", "--format", "csv", "-c",
                           titles).splitlines()))
        comments = "[:find ?t ?c :where [?i :issue/title ?t] [?i :issue/comment ?x] [?x :comment/text ?c]]"
        self.assertEqual(
            sorted(self.ok("--format", "csv", "-c", comments).splitlines()),
            sorted(self.ok("--db", "copy", "--format", "csv", "-c",
                           comments).splitlines()))

    def test_export_as_of(self):
        self.ok("-c", ".create asof")
        self.ok("--db", "asof", "-c",
                '.t [{:db/ident :k/v :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one}]')
        t = json.loads(self.ok("--db", "asof", "--format", "json", "-c",
                               '[{:k/v 1}]'))["t"]
        self.ok("--db", "asof", "-c", '[{:k/v 2}]')
        path = os.path.join(self.tmp, "asof.edn")
        self.ok("--db", "asof", "-c", ".as-of %d" % t, "-c", ".export " + path)
        text = read(path)
        self.assertIn(":k/v 1", text)
        self.assertNotIn(":k/v 2", text)
        self.fails("--db", "asof", "-c", ".history", "-c", ".export " + path)

    def test_import_ndjson_and_errors(self):
        self.ok("-c", ".create nd")
        self.ok("--db", "nd", "-c",
                '.t [{:db/ident :p/email :db/valueType :db.type/string '
                ':db/cardinality :db.cardinality/one :db/unique '
                ':db.unique/identity} {:db/ident :p/friend :db/valueType '
                ':db.type/ref :db/cardinality :db.cardinality/many} '
                '{:db/ident :p/born :db/valueType :db.type/instant '
                ':db/cardinality :db.cardinality/one}]')
        path = os.path.join(self.tmp, "people.ndjson")
        with open(path, "w") as f:
            for k in range(30):
                rec = {":p/email": "p%d@x" % k,
                       ":p/born": {"#inst": "2000-01-%02dT00:00:00Z" % (k % 28 + 1)}}
                # Lookup refs resolve against the database before the
                # transaction: refer to people of earlier batches.
                if k >= 7:
                    rec[":p/friend"] = [[":p/email", "p%d@x" % (k - 7)]]
                f.write(json.dumps(rec) + "\n")
        self.ok("--db", "nd", "-c", ".import %s --batch 7" % path)
        out = self.ok("--db", "nd", "--format", "csv", "-t", "-c",
                      '[:find (count ?f) . :where [_ :p/friend ?f]]')
        self.assertEqual(out.strip(), "23")
        bad = os.path.join(self.tmp, "bad.edn")
        with open(bad, "w") as f:
            f.write('[{:p/email "ok@x"}]\n\n[{:p/email "a@x"}\n {:p/nope 1}]\n')
        r = self.fails("--db", "nd", "-c", ".import " + bad)
        self.assertRegex(r.stderr, r"bad.edn:(3|4)")
        bad_json = os.path.join(self.tmp, "bad.ndjson")
        with open(bad_json, "w") as f:
            f.write('{":p/email": "z@x"}\n{":p/email": \n')
        r = self.fails("--db", "nd", "-c", ".import " + bad_json)
        self.assertIn("bad.ndjson", r.stderr)
        self.assertIn("line 2", r.stderr)
        self.fails("-c", ".import /nonexistent/file.edn")


    def test_import_csv(self):
        self.ok("-c", ".create csv")
        self.ok("--db", "csv", "-c",
                '.t [{:db/ident :u/email :db/valueType :db.type/string '
                ':db/cardinality :db.cardinality/one :db/unique '
                ':db.unique/identity} '
                '{:db/ident :p/name :db/valueType :db.type/string '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/age :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/score :db/valueType :db.type/double '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/ok :db/valueType :db.type/boolean '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/born :db/valueType :db.type/instant '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/kind :db/valueType :db.type/keyword '
                ':db/cardinality :db.cardinality/one} '
                '{:db/ident :p/owner :db/valueType :db.type/ref '
                ':db/cardinality :db.cardinality/one}]')
        self.ok("--db", "csv", "-c", '[{:u/email "a@x"} {:u/email "b@x"}]')
        path = os.path.join(self.tmp, "people.csv")
        with open(path, "w") as f:
            # Quotes with commas, doubled quotes and a line break; an empty
            # cell leaves its attribute out; a column skipped by --map.
            f.write('name,age,score,ok,born,kind,who,note\r\n'
                    '"Smith, Ann",42,1.5,yes,2000-01-02T03:04:05Z,p/admin,a@x,x\r\n'
                    '"Bob ""the"" Builder",7,2,false,1990-05-06T00:00:00Z,'
                    ':p/user,b@x,y\n'
                    '"two\nlines",,,,,,,z\n'
                    '\n')
        maps = ["--map name=:p/name", "--map age=p/age", "--map score=:p/score",
                "--map ok=:p/ok", "--map born=:p/born", "--map kind=:p/kind",
                "--map who=:p/owner->:u/email", "--map note="]
        self.ok("--db", "csv", "-c", ".import %s %s" % (path, " ".join(maps)))
        out = self.ok(
            "--db", "csv", "--format", "csv", "-t", "-c",
            '[:find ?n ?a ?s ?o ?k ?e ?b :where [?p :p/name ?n] '
            '[(get-else $ ?p :p/age -1) ?a] [(get-else $ ?p :p/score -1.0) ?s] '
            '[(get-else $ ?p :p/ok false) ?o] '
            '[(get-else $ ?p :p/kind :none) ?k] '
            '[(get-else $ ?p :p/owner 0) ?w] [(get-else $ ?w :u/email "-") ?e] '
            '[(get-else $ ?p :p/born #inst "1970-01-01T00:00:00Z") ?b]]')
        rows = sorted(csv.reader(io.StringIO(out)))
        self.assertEqual(rows, sorted([
            ["Smith, Ann", "42", "1.5", "true", ":p/admin", "a@x",
             "2000-01-02T03:04:05Z"],
            ['Bob "the" Builder', "7", "2.0", "false", ":p/user", "b@x",
             "1990-05-06T00:00:00Z"],
            ["two\nlines", "-1", "-1.0", "false", ":none", "-",
             "1970-01-01T00:00:00Z"]]))
        # A header naming attributes needs no --map.
        plain = os.path.join(self.tmp, "plain.csv")
        with open(plain, "w") as f:
            f.write(":p/name,p/age\nCarol,30\n")
        self.ok("--db", "csv", "-c", ".import " + plain)
        self.assertEqual(self.ok("--db", "csv", "-t", "--format", "csv", "-c",
                                 '[:find ?a . :where [?p :p/name "Carol"] '
                                 '[?p :p/age ?a]]').strip(), "30")
        # Errors name the file, the line, the column and the attribute,
        # and nothing of a refused file is half imported.
        def refused(text, *options):
            bad = os.path.join(self.tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write(text)
            return self.fails("--db", "csv", "-c",
                              " ".join((".import", bad) + options)).stderr
        err = refused("p/nam,p/age\nx,1\n")
        self.assertIn("bad.csv: line 1", err)
        self.assertIn("did you mean :p/name?", err)
        err = refused("p/name,p/age\nx,1\ny,abc\n")
        self.assertIn("bad.csv: line 3: column 2 (p/age, :p/age, "
                      ":db.type/long): not an integer", err)
        self.assertIn("line 1: --map names column zzz",
                      refused("p/name\nx\n", "--map", "zzz=:p/name"))
        self.assertIn("line 2: a quoted field is not closed",
                      refused('p/name\n"x\n'))
        self.assertIn("line 2: the row has 3 fields, the header 2",
                      refused("p/name,p/age\nx,1,3\n"))
        self.assertIn("map the column as COLUMN=:ns/ref->:ns/unique",
                      refused("p/name,p/owner\nx,nobody\n"))
        self.assertIn("not a ref", refused("p/name\nx\n", "--map",
                                           "p/name=:p/name->:u/email"))
        # A lookup that finds nothing is the server's error, at its line.
        self.assertRegex(refused("p/name,p/owner\nx,[:u/email zz]\n"),
                         r"bad.csv:2")
        self.assertEqual(self.ok("--db", "csv", "-t", "-c",
                                 '[:find (count ?p) . :where [?p :p/name]]'
                                 ).strip(), "4")

    def test_import_stops_on_ctrl_c_and_resumes(self):
        self.ok("-c", ".create stop")
        self.ok("--db", "stop", "-c",
                '.t [{:db/ident :c/n :db/valueType :db.type/long '
                ':db/cardinality :db.cardinality/one}]')
        path = os.path.join(self.tmp, "many.csv")
        total = 300000
        with open(path, "w") as f:
            f.write(":c/n\n")
            for i in range(total):
                f.write("%d\n" % i)
        count = ('[:find (count ?e) (count-distinct ?n) :where [?e :c/n ?n]]')
        proc = subprocess.Popen(
            [harness.ARGS.cli, "--addr", self.server.addr, "--db", "stop",
             "-c", ".import %s --batch 10" % path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Ctrl-C once the import is under way (the server has committed
        # some of it), not before it started.
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            out = self.ok("--db", "stop", "-t", "--format", "csv", "-c", count)
            if out.strip() and out.strip() != "0,0":
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        if proc.returncode in (0, 130):
            # The import ended before Ctrl-C reached it (130: between the
            # import's end and the exit, a script's Ctrl-C exits).
            self.skipTest("the import finished before Ctrl-C reached it")
        self.assertEqual(proc.returncode, 1, err)
        self.assertIn("Stopping the import", err)
        m = re.search(r"the first (\d+) transactions of .* are committed.*"
                      r"To go on: (\.import .* --skip \1)$", err.strip())
        self.assertIsNotNone(m, err)
        committed = int(m.group(1))
        # Exactly the first `committed` transactions are in, nothing twice.
        self.assertEqual(
            self.ok("--db", "stop", "-t", "--format", "csv", "-c",
                    count).strip(),
            "%d,%d" % (committed * 10, committed * 10))
        self.ok("--db", "stop", "-c", m.group(2))
        self.assertEqual(
            self.ok("--db", "stop", "-t", "--format", "csv", "-c",
                    count).strip(), "%d,%d" % (total, total))


class AuthTest(unittest.TestCase):

    def test_bearer_token(self):
        with harness.Server(["--auth-token=s3cret"]) as server:
            r = cli(server, "-c", ".dbs")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("not authenticated", r.stderr)
            r = cli(server, "--token", "wrong", "-c", ".dbs")
            self.assertEqual(r.returncode, 2, r.stderr)
            r = cli(server, "--token", "s3cret", "-c", ".dbs")
            self.assertEqual(r.returncode, 0, r.stderr)
            env = dict(os.environ, MENTAT_TOKEN="s3cret")
            r = cli(server, "--format", "csv", "-t", "-c",
                    "[:find ?e . :where [?e :db/ident :db/ident]]", env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "10\n")


class BackupTest(unittest.TestCase):
    """.backup DIR, a restore from it, and `mentat-cli health`."""

    def test_backup_restore_and_health(self):
        tmp = tempfile.mkdtemp(prefix="mentat-cli-backup-")
        backups = os.path.join(tmp, "backups")
        os.makedirs(backups)
        try:
            with harness.Server(["--backup-dir=" + backups]) as server:
                r = cli(server, "health")
                self.assertEqual((r.returncode, r.stdout), (0, "SERVING\n"),
                                 r.stderr)
                r = cli(server,
                        "-c", ".t [{:db/ident :b/n :db/valueType "
                        ":db.type/long :db/cardinality :db.cardinality/one}]",
                        "-c", ".t [{:b/n 1} {:b/n 2}]")
                self.assertEqual(r.returncode, 0, r.stderr)
                dest = os.path.join(backups, "b1")
                r = cli(server, "--format", "csv", "-c", ".backup " + dest)
                self.assertEqual(r.returncode, 0, r.stderr)
                rows = list(csv.reader(io.StringIO(r.stdout)))
                self.assertEqual(rows[0], ["database", "destination", "t",
                                           "basis tx", "files", "bytes", "ms"])
                self.assertEqual(rows[1][:2], ["default", dest])
                basis_t = int(rows[1][2])
                self.assertTrue(os.path.exists(os.path.join(dest, "CURRENT")))
                # Written after the backup: not in it.
                self.assertEqual(cli(server, "-c", ".t [{:b/n 3}]").returncode,
                                 0)
                r = cli(server, "-c", ".backup " + dest)
                self.assertEqual(r.returncode, 1)
                self.assertIn("already exists", r.stderr)
                r = cli(server, "-c", ".backup relative/dir")
                self.assertEqual(r.returncode, 1)
                self.assertIn("absolute path", r.stderr)
                r = cli(server, "-c", ".backup " + os.path.join(tmp, "out"))
                self.assertEqual(r.returncode, 1)
                self.assertIn("outside the server's --backup-dir", r.stderr)
            r = cli(server, "health")
            self.assertEqual(r.returncode, 1)

            # Restore: the backup copied into a stopped server's data dir
            # under the database's name.
            restored = harness.Server()
            shutil.copytree(dest, os.path.join(restored.dir, "data", "copy"))
            with restored:
                r = cli(restored, "--db", "copy", "--format", "csv", "-t",
                        "-c", "[:find ?n :where [_ :b/n ?n]]")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(sorted(r.stdout.split()), ["1", "2"])
                r = cli(restored, "--format", "csv", "-t", "-c", ".dbs")
                t = {row[1]: int(row[2])
                     for row in csv.reader(io.StringIO(r.stdout))}
                self.assertEqual(t["copy"], basis_t)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def read(path):
    with open(path) as f:
        return f.read()


def normalize(text):
    """Renames tempids in order of first appearance, so two exports of
    equal databases with different entity ids compare equal."""
    names = {}

    def rename(m):
        return '"e%d"' % names.setdefault(m.group(1), len(names))
    body = "\n".join(l for l in text.splitlines() if not l.startswith(";;"))
    return re.sub(r'"e(\d+)"', rename, body)


if __name__ == "__main__":
    harness.parse_args()
    unittest.main(verbosity=2)
