"""mentat_client against a live mentatd: transact, a query streamed in
several batches, pull and pull_many, as_of / since / history, typed values
both ways, an EDN error with its position, request ids, token auth.

Run by CTest: client_test.py --mentatd PATH (client/python on PYTHONPATH;
the generated code ships in mentat_client/_pb)."""

import asyncio
import datetime
import decimal
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402

import mentatd  # noqa: E402
from mentat_client import (Client, Edn, Json, Keyword, MentatError,  # noqa
                           aio, as_of, history, since)

SCHEMA = """[
 {:db/ident :user/email :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :user/name :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one}
 {:db/ident :user/age :db/valueType :db.type/long
  :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :user/joined :db/valueType :db.type/instant
  :db/cardinality :db.cardinality/one}
 {:db/ident :user/key :db/valueType :db.type/uuid
  :db/cardinality :db.cardinality/one}
 {:db/ident :user/score :db/valueType :db.type/double
  :db/cardinality :db.cardinality/one}
 {:db/ident :user/balance :db/valueType :db.type/bigdec
  :db/cardinality :db.cardinality/one}
 {:db/ident :user/role :db/valueType :db.type/ref
  :db/cardinality :db.cardinality/many}
 {:db/ident :user/cohort :db/valueType :db.type/long
  :db/cardinality :db.cardinality/one}
 {:db/ident :role/admin} {:db/ident :role/dev}]"""

ROWS = 2500  # more than two batches of the server's default 1000


def ready(addr, **kw):
    with Client(addr, timeout=5, **kw) as c:
        c.databases()
    return True


class ClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = mentatd.Mentatd().start(ready)
        cls.c = Client(cls.server.addr, timeout=60)
        cls.schema_tx = cls.c.transact(SCHEMA)
        users = " ".join(
            '{:user/email "bulk%d@x.org" :user/age %d :user/cohort 1}' %
            (i, i % 90)
            for i in range(ROWS))
        cls.c.transact("[" + users + "]")

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.server.cleanup()

    def test_transact_reports_tempids_and_datoms(self):
        r = self.c.transact(
            '[{:db/id "ann" :user/email "ann@x.org" :user/name "Ann"} '
            '[:db/add "ann" :user/role :role/admin] '
            '[:db/add "ann" :user/role :role/dev]]', return_datoms=True)
        self.assertIn("ann", r.tempids)
        self.assertEqual(r.basis_after, r.tx)
        self.assertGreater(r.tx, r.basis_before)
        self.assertFalse(r.replayed)
        self.assertIsInstance(r.tx_instant, datetime.datetime)
        self.assertEqual(len(r.datoms), r.datom_count)
        self.assertIn(r.tempids["ann"], {d.e for d in r.datoms})

    def test_query_streams_in_batches(self):
        stream = self.c.query(
            "[:find ?e ?m :where [?e :user/email ?m] [?e :user/cohort 1]]")
        self.assertEqual(stream.columns, ["?e", "?m"])
        self.assertGreater(stream.basis_tx, 0)
        sizes = [len(b) for b in stream.batches()]
        self.assertGreaterEqual(len(sizes), 3, sizes)
        self.assertEqual(sum(sizes), ROWS)
        self.assertEqual(stream.rows_so_far, ROWS)
        # Rows one by one, with a smaller batch size: every row once.
        rows = list(self.c.query(
            "[:find ?m :where [?e :user/email ?m] [?e :user/cohort 1]]",
            batch_rows=100))
        self.assertEqual(len(rows), ROWS)
        self.assertEqual(len({r[0] for r in rows}), ROWS)

    def test_small_query_over_several_messages(self):
        # QueryFirst answers with the first message; the Query stream
        # continues from its token: every row once, the columns once.
        q = "[:find ?e ?m :where [?e :user/age 3] [?e :user/email ?m]]"
        whole = self.c.q(q)
        self.assertEqual(len(whole), 28)
        stream = self.c.query(q, batch_rows=10)
        self.assertEqual(stream.columns, ["?e", "?m"])
        sizes = [len(b) for b in stream.batches()]
        self.assertEqual(sizes, [10, 10, 8])
        self.assertEqual(stream.rows_so_far, 28)
        self.assertEqual(sorted(map(tuple, self.c.query(q, batch_rows=10))),
                         sorted(map(tuple, whole)))

        async def on_aio():
            async with aio.Client(self.server.addr, timeout=60) as a:
                s = await a.query(q, batch_rows=10)
                rows = [r async for r in s]
                return s.columns, rows
        columns, rows = asyncio.run(on_aio())
        self.assertEqual(columns, ["?e", "?m"])
        self.assertEqual(sorted(map(tuple, rows)), sorted(map(tuple, whole)))

    def test_query_inputs_and_find_shapes(self):
        q = "[:find ?e . :in $ ?m :where [?e :user/email ?m]]"
        e = self.c.q(q, "bulk7@x.org")
        self.assertIsInstance(e, int)
        self.assertEqual(self.c.q(q, Edn('"bulk7@x.org"')), e)
        self.assertEqual(self.c.q(q, Json('"bulk7@x.org"')), e)
        ages = self.c.q("[:find [?a ...] :in $ [?m ...] :where "
                        "[?e :user/email ?m] [?e :user/age ?a]]",
                        ["bulk1@x.org", "bulk2@x.org"])
        self.assertEqual(sorted(ages), [1, 2])
        self.assertEqual(self.c.q("[:find (count ?e) . :where "
                                  "[?e :user/age 3] [?e :user/cohort 1]]"),
                         28)
        self.assertIsNone(self.c.q(q, "nobody@x.org"))
        self.assertEqual(len(self.c.q("[:find ?e :where [?e :user/age _]]",
                                      limit=10)), 10)

    def test_typed_values_round_trip(self):
        joined = datetime.datetime(2024, 2, 29, 12, 30, 1, 250000,
                                   tzinfo=datetime.timezone.utc)
        key = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
        self.c.transact(
            '[{:user/email "typed@x.org" :user/joined #inst '
            '"2024-02-29T12:30:01.250Z" :user/key #uuid '
            '"f81d4fae-7dec-11d0-a765-00a0c91e6bf6" :user/score 2.5 '
            ':user/balance 12.50M :user/role :role/dev}]')
        row = self.c.q("[:find [?j ?k ?s ?b] :in $ ?m :where "
                       "[?e :user/email ?m] [?e :user/joined ?j] "
                       "[?e :user/key ?k] [?e :user/score ?s] "
                       "[?e :user/balance ?b]]", "typed@x.org")
        self.assertEqual(row, [joined, key, 2.5, decimal.Decimal("12.50")])
        # Typed inputs: an instant and a uuid find the entity.
        found = self.c.q("[:find ?m . :in $ ?j ?k :where [?e :user/joined ?j]"
                         " [?e :user/key ?k] [?e :user/email ?m]]",
                         joined, key)
        self.assertEqual(found, "typed@x.org")
        ident = self.c.q("[:find ?i . :where [?e :user/email \"typed@x.org\"]"
                         " [?e :user/role ?r] [?r :db/ident ?i]]")
        self.assertEqual(ident, Keyword("role/dev"))
        self.assertEqual(ident, ":role/dev")
        self.assertEqual(ident.namespace, "role")

    def test_pull_and_pull_many(self):
        self.c.transact('[{:user/email "bob@x.org" :user/name "Bob" '
                        ':user/age 41 :user/role :role/admin}]')
        bob = self.c.pull("[:user/name :user/age {:user/role [:db/ident]}]",
                          (":user/email", "bob@x.org"))
        self.assertEqual(bob[":user/name"], "Bob")
        self.assertEqual(bob[Keyword("user/age")], 41)
        self.assertEqual(bob[":user/role"], [{":db/ident": ":role/admin"}])
        e = self.c.q('[:find ?e . :where [?e :user/email "bob@x.org"]]')
        self.assertEqual(self.c.pull("[:user/email]", e),
                         {":user/email": "bob@x.org"})
        self.assertEqual(self.c.pull("[:db/ident]", ":role/dev"),
                         {":db/ident": ":role/dev"})
        many = self.c.pull_many("[:user/age]", [
            ("user/email", "bulk5@x.org"), e, ("user/email", "none@x.org")])
        self.assertEqual(many, [{":user/age": 5}, {":user/age": 41}, None])
        with self.assertRaises(MentatError) as err:
            self.c.pull("[*]", (":user/email", "none@x.org"))
        self.assertEqual(err.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_deep_pull_is_refused_clearly(self):
        # A chain of 30 users through a many-valued ref: each level nests
        # five protobuf messages, and protobuf parses at most 100.
        self.c.transact("[{:db/ident :user/mentor :db/valueType :db.type/ref"
                        " :db/cardinality :db.cardinality/many}]")
        self.c.transact("[" + " ".join(
            '{:db/id "m%d" :user/email "mentee%d@x.org"%s}' %
            (i, i, ' :user/mentor ["m%d"]' % (i + 1) if i < 29 else "")
            for i in range(30)) + "]")
        top = (":user/email", "mentee0@x.org")
        with self.assertRaises(MentatError) as err:
            self.c.pull("[:user/email {:user/mentor 20}]", top)
        self.assertEqual(err.exception.code,
                         grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("the pull result nests too deep to send: maps 21 deep",
                      err.exception.details)
        with self.assertRaises(MentatError) as err:
            self.c.q('[:find (pull ?e [:user/email {:user/mentor ...}]) . '
                     ':where [?e :user/email "mentee0@x.org"]]')
        self.assertEqual(err.exception.code,
                         grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("nests too deep", err.exception.details)
        # As deep as the server sends, Python parses.
        v = self.c.pull("[:user/email {:user/mentor 19}]", top)
        for level in range(19):
            self.assertEqual(v[":user/email"], "mentee%d@x.org" % level)
            v = v[":user/mentor"][0]
        self.assertEqual(v, {":user/email": "mentee19@x.org"})

    def test_as_of_since_history(self):
        first = self.c.transact('[{:user/email "carol@x.org" :user/age 30}]')
        second = self.c.transact('[{:user/email "carol@x.org" :user/age 31}]')
        q = '[:find ?a . :where [?e :user/email "carol@x.org"] [?e :user/age ?a]]'
        self.assertEqual(self.c.q(q), 31)
        self.assertEqual(self.c.as_of(first.tx).q(q), 30)
        self.assertIsNone(self.c.as_of(first.basis_before).q(q))
        # A datetime names the last transaction at or before it.
        self.assertEqual(self.c.as_of(first.tx_instant).q(q), 30)
        self.assertEqual(self.c.with_basis(as_of(first.tx)).pull(
            "[:user/age]", ("user/email", "carol@x.org")), {":user/age": 30})
        stream = self.c.as_of(first.tx).query(q)
        list(stream)
        self.assertEqual(stream.basis_tx, second.tx)
        changed = self.c.since(first.tx).q(
            "[:find ?a . :where [?e :user/age ?a]]")
        self.assertEqual(changed, 31)
        hist = self.c.history().q(
            '[:find ?a ?tx ?added :where [?e :user/email "carol@x.org"] '
            '[?e :user/age ?a ?tx ?added]]')
        self.assertEqual(sorted(hist), [[30, first.tx, True],
                                        [30, second.tx, False],
                                        [31, second.tx, True]])
        with self.assertRaises(MentatError) as err:
            self.c.with_basis(since(None)).q(q)
        self.assertEqual(err.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(history().kind, 3)

    def test_bad_edn_names_line_and_column(self):
        with self.assertRaises(MentatError) as err:
            self.c.transact('[{:user/email "x@x.org"\n  :user/age }]')
        self.assertEqual(err.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertRegex(err.exception.details, r"line 2, column \d+")
        with self.assertRaises(MentatError) as err:
            list(self.c.query("[:find ?e :where [?e :user/email]"))
        self.assertEqual(err.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertRegex(err.exception.details, r"line 1, column \d+")
        with self.assertRaises(MentatError) as err:
            self.c.use("no-such-db").q("[:find ?e :where [?e :db/ident]]")
        self.assertEqual(err.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_dry_run_and_with_tx(self):
        c = self.c
        c.transact('[{:user/email "wit@x.org" :user/name "Wit"}]')
        name = ('[:find ?n . :where [?e :user/email "wit@x.org"] '
                '[?e :user/name ?n]]')
        rename = '[{:db/id "w" :user/email "wit@x.org" :user/name "Witt"}]'
        dry = c.transact(rename, dry_run=True, return_datoms=True)
        self.assertTrue(dry.dry_run)
        self.assertTrue(any(d.added and d.v == "Witt" for d in dry.datoms))
        self.assertTrue(any(not d.added and d.v == "Wit" for d in dry.datoms))
        self.assertEqual(c.q(name), "Wit")  # nothing committed
        # The commit gets the dry run's ids.
        real = c.transact(rename)
        self.assertEqual((real.tx, real.tempids), (dry.tx, dry.tempids))
        c.transact('[[:db/add [:user/email "wit@x.org"] :user/name "Wit"]]')

        w = c.with_tx(rename)
        self.assertEqual(w.q(name), "Witt")
        self.assertEqual(
            w.pull("[:user/name]", (":user/email", "wit@x.org"))[":user/name"],
            "Witt")
        self.assertEqual(
            w.pull_many("[:user/name]", [(":user/email", "wit@x.org")])[0]
            [":user/name"], "Witt")
        self.assertEqual(
            [d.v for d in w.datoms("eavt", (":user/email", "wit@x.org"),
                                   ":user/name")], ["Witt"])
        pets = c.with_tx('[{:db/ident :pet/name :db/valueType '
                         ':db.type/string :db/cardinality '
                         ':db.cardinality/one}]')
        self.assertIn(":pet/name",
                      pets.explain("[:find ?n :where [_ :pet/name ?n]]"))
        with self.assertRaises(MentatError):
            c.explain("[:find ?n :where [_ :pet/name ?n]]")
        # A view of a view chains its transactions.
        gone = w.with_tx(
            '[[:db/retract [:user/email "wit@x.org"] :user/name "Witt"]]')
        self.assertIsNone(gone.q(name))
        self.assertEqual(c.q(name), "Wit")
        with self.assertRaises(MentatError) as err:
            c.with_tx('[[:db/add "x" :user/nope 1]]').q(name)
        self.assertEqual(err.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("with_tx_data[0]", err.exception.details)
        self.assertIn(":user/nope", err.exception.details)

    def test_request_id_replays(self):
        tx = '[{:user/email "dora@x.org" :user/age 7}]'
        a = self.c.transact(tx, request_id="py-dora-1")
        b = self.c.transact(tx, request_id="py-dora-1")
        self.assertFalse(a.replayed)
        self.assertTrue(b.replayed)
        self.assertEqual(a.tx, b.tx)
        with self.assertRaises(MentatError) as err:
            self.c.transact('[{:user/email "dora@x.org" :user/age 8}]',
                            request_id="py-dora-1")
        self.assertEqual(err.exception.code,
                         grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("py-dora-1", err.exception.details)

    def test_explain_and_databases(self):
        plan = self.c.explain("[:find ?e :where [?e :user/age 3]]",
                              profile=True)
        self.assertIn(":user/age", plan)
        self.assertIn("default", self.c.databases())

    def test_ping_answers_with_the_version(self):
        self.assertTrue(self.c.ping().startswith("mentatd "))

    def test_tx_range_and_subscribe_join_split_transactions(self):
        # Three names of 1 MiB: the server sends this transaction in parts
        # (its messages hold about 1 MiB); the client joins them.
        names = ["a" * (1 << 20), "b" * (1 << 20), "c" * (1 << 20)]
        r = self.c.transact("[" + " ".join(
            '{:user/email "split%d@x.org" :user/name "%s"}' % (i, n)
            for i, n in enumerate(names)) + "]")
        txs = list(self.c.tx_range(r.tx, r.tx + 1))
        self.assertEqual([t.tx for t in txs], [r.tx])
        self.assertEqual(len(txs[0].datoms), r.datom_count)
        got = sorted(d.v[0] for d in txs[0].datoms
                     if isinstance(d.v, str) and len(d.v) == 1 << 20)
        self.assertEqual(got, ["a", "b", "c"])
        live = self.c.subscribe(from_tx=r.tx)
        first = next(live)
        live.close()
        self.assertEqual(first.tx, r.tx)
        self.assertEqual(len(first.datoms), r.datom_count)


class ResumeTest(unittest.TestCase):

    def test_stream_resumes_across_a_server_crash(self):
        server = mentatd.Mentatd().start(ready)
        try:
            with Client(server.addr, timeout=60) as c:
                c.transact(SCHEMA)
                # 16 MB of rows: more than gRPC's flow-control windows
                # let the client buffer, so the crash breaks the stream.
                pad = "x" * 2000
                for k in range(4):
                    c.transact("[" + " ".join(
                        '{:user/email "r%d@x.org" :user/name "%s%d"}' %
                        (i, pad, i) for i in range(k * 2000, k * 2000 + 2000))
                        + "]")
                q = "[:find ?e ?n :where [?e :user/name ?n]]"
                want = sorted(c.q(q))
                stream = c.query(q, batch_rows=100)
                batches = stream.batches()
                got = list(next(batches))
                server.kill()
                server.restart(ready)
                c.transact('[{:user/email "late@x.org" :user/name "L"}]')
                for batch in batches:
                    got.extend(batch)
                self.assertGreaterEqual(stream.resumed, 1)
                # The same basis as before the crash: no row lost, none
                # repeated, and the later write not seen.
                self.assertEqual(sorted(got), want)
                self.assertEqual(stream.rows_so_far, 8000)
        finally:
            server.cleanup()


    def test_datoms_and_aio_streams_resume_across_a_server_crash(self):
        server = mentatd.Mentatd().start(ready)
        try:
            with Client(server.addr, timeout=60) as c:
                c.transact(SCHEMA)
                pad = "x" * 2000  # 16 MB: past gRPC's flow-control windows
                for k in range(4):
                    c.transact("[" + " ".join(
                        '{:user/email "d%d@x.org" :user/name "%s%d"}' %
                        (i, pad, i) for i in range(k * 2000, k * 2000 + 2000))
                        + "]")
                want = [(d.e, d.v) for d in c.datoms("aevt", ":user/name")]
                self.assertEqual(len(want), 8000)
                stream = c.datoms("aevt", ":user/name", batch_size=100)
                got = [(d.e, d.v) for d in itertools.islice(stream, 100)]
                server.kill()
                server.restart(ready)
                c.transact('[{:user/email "late@x.org" :user/name "L"}]')
                got.extend((d.e, d.v) for d in stream)
                # Every datom once, in index order, the later write unseen.
                self.assertEqual(got, want)

                async def read_aio():
                    ac = aio.Client(server.addr, timeout=60)
                    try:
                        s = await ac.query(
                            "[:find ?e ?n :where [?e :user/name ?n]]",
                            batch_rows=100)
                        rows = []
                        batches = s.batches()
                        rows.extend(await batches.__anext__())
                        server.kill()
                        server.restart(ready)
                        async for b in batches:
                            rows.extend(b)
                        return s, rows
                    finally:
                        await ac.close()
                s, rows = asyncio.run(read_aio())
                self.assertGreaterEqual(s.resumed, 1)
                self.assertEqual(len(rows), 8001)
                self.assertEqual(len({r[0] for r in rows}), 8001)
        finally:
            server.cleanup()


class TokenTest(unittest.TestCase):

    def test_token_is_required(self):
        server = mentatd.Mentatd("--auth-token=py-s3cret").start(
            lambda addr: ready(addr, token="py-s3cret"))
        try:
            for token in (None, "wrong"):
                with Client(server.addr, token=token, timeout=10) as c:
                    with self.assertRaises(MentatError) as err:
                        c.transact("[]")
                    self.assertEqual(err.exception.code,
                                     grpc.StatusCode.UNAUTHENTICATED)
                    with self.assertRaises(MentatError) as err:
                        list(c.query("[:find ?e :where [?e :db/ident]]"))
                    self.assertEqual(err.exception.code,
                                     grpc.StatusCode.UNAUTHENTICATED)
                    with self.assertRaises(MentatError) as err:
                        c.ping()
                    self.assertEqual(err.exception.code,
                                     grpc.StatusCode.UNAUTHENTICATED)
            with Client(server.addr, token="py-s3cret", timeout=10) as c:
                self.assertTrue(c.ping().startswith("mentatd "))
                self.assertGreater(c.transact("[]").tx, 0)
                self.assertTrue(c.q("[:find ?e . :where [?e :db/ident "
                                    ":db/ident]]"))
        finally:
            server.cleanup()


class TlsTest(unittest.TestCase):

    def test_tls_with_a_token(self):
        if shutil.which("openssl") is None:
            self.skipTest("openssl is not available")
        keys = tempfile.mkdtemp(prefix="mentat-py-tls-")
        self.addCleanup(shutil.rmtree, keys, True)
        cert, key = os.path.join(keys, "cert.pem"), os.path.join(keys, "key.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
             "-days", "2", "-subj", "/CN=localhost", "-addext",
             "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key,
             "-out", cert], check=True, capture_output=True)
        server = mentatd.Mentatd(
            "--tls-cert=" + cert, "--tls-key=" + key,
            "--auth-token=tls-s3cret").start(
                lambda addr: ready(addr, root_certificates=cert,
                                   token="tls-s3cret"))
        self.addCleanup(server.cleanup)
        with Client(server.addr, root_certificates=cert, token="tls-s3cret",
                    timeout=10) as c:
            self.assertGreater(c.transact("[]").tx, 0)
            self.assertIn("default", c.databases())
        with Client(server.addr, root_certificates=cert, timeout=10) as c:
            with self.assertRaises(MentatError) as err:
                c.databases()
            self.assertEqual(err.exception.code,
                             grpc.StatusCode.UNAUTHENTICATED)
        # A plaintext client cannot talk to it.
        with Client(server.addr, token="tls-s3cret", timeout=3) as c:
            with self.assertRaises(MentatError):
                c.databases()


if __name__ == "__main__":
    mentatd.parse_args()
    unittest.main(verbosity=2)
