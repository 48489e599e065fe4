"""mentat_client.aio against a live mentatd: every method as a coroutine,
the streams (query, datoms, tx_range, subscribe) as async iterators, errors
as the blocking client's classes.

Run by CTest: aio_test.py --mentatd PATH."""

import asyncio
import os
import sys
import shutil
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mentatd  # noqa: E402
import mentat_client as mc  # noqa: E402
from mentat_client import aio, kw  # noqa: E402

SCHEMA = [
    {":db/ident": kw(":user/email"), ":db/valueType": kw(":db.type/string"),
     ":db/cardinality": kw(":db.cardinality/one"),
     ":db/unique": kw(":db.unique/identity")},
    {":db/ident": kw(":user/age"), ":db/valueType": kw(":db.type/long"),
     ":db/cardinality": kw(":db.cardinality/one"), ":db/index": True},
]
ROWS = 2500  # more than two of the server's default batches


def ready(addr):
    with mc.Client(addr, timeout=5) as c:
        c.databases()
    return True


class AioTest(unittest.IsolatedAsyncioTestCase):

    @classmethod
    def setUpClass(cls):
        cls.backups = tempfile.mkdtemp(prefix="mentat-py-aio-backups-")
        cls.server = mentatd.Mentatd(
            "--backup-dir=" + cls.backups).start(ready)
        with mc.Client(cls.server.addr, timeout=60) as c:
            c.transact(SCHEMA)
            c.transact([{":user/email": "bulk%d@x.org" % i, ":user/age": i}
                        for i in range(ROWS)])

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.backups, ignore_errors=True)

    async def asyncSetUp(self):
        self.c = aio.Client(self.server.addr, timeout=60)

    async def asyncTearDown(self):
        await self.c.close()

    async def test_transact_query_pull(self):
        r = await self.c.transact([{":db/id": "a", ":user/email": "a@x.org",
                                    ":user/age": 9000}])
        self.assertIn("a", r.tempids)
        stream = await self.c.query(
            "[:find ?e ?m :where [?e :user/email ?m] [?e :user/age ?a] "
            "[(< ?a %d)]]" % ROWS)
        self.assertEqual(stream.columns, ["?e", "?m"])
        sizes = [len(b) async for b in stream.batches()]
        self.assertGreaterEqual(len(sizes), 3, sizes)
        self.assertEqual(sum(sizes), ROWS)
        # Iterated without awaiting first: rows one by one.
        rows = [row async for row in self.c.query(
            "[:find ?m :where [?e :user/email ?m] [?e :user/age ?a] "
            "[(< ?a %d)]]" % ROWS, batch_rows=100)]
        self.assertEqual(len(rows), ROWS)
        self.assertEqual(await self.c.q(
            "[:find ?e . :in $ ?m :where [?e :user/email ?m]]", "a@x.org"),
            r.tempids["a"])
        self.assertEqual(await self.c.pull("[:user/age]",
                                           (":user/email", "a@x.org")),
                         {":user/age": 9000})
        self.assertEqual(await self.c.pull_many(
            "[:user/age]", [r.tempids["a"], (":user/email", "none@x.org")]),
            [{":user/age": 9000}, None])
        self.assertEqual(await self.c.as_of(r.basis_before).q(
            '[:find ?a . :where [?e :user/email "a@x.org"] '
            '[?e :user/age ?a]]'), None)
        self.assertIn(":user/age", await self.c.explain(
            "[:find ?e :where [?e :user/age 3]]"))

    async def test_dry_run_and_with_tx(self):
        tx = [{":db/id": "w", ":user/email": "with@x.org", ":user/age": 7}]
        dry = await self.c.transact(tx, dry_run=True)
        self.assertTrue(dry.dry_run)
        age = ('[:find ?a . :where [?e :user/email "with@x.org"] '
               '[?e :user/age ?a]]')
        self.assertIsNone(await self.c.q(age))
        w = self.c.with_tx(tx)
        self.assertEqual(await w.q(age), 7)
        self.assertEqual(await w.pull("[:user/age]",
                                      (":user/email", "with@x.org")),
                         {":user/age": 7})
        self.assertEqual(await w.pull_many(
            "[:user/age]", [(":user/email", "with@x.org")]),
            [{":user/age": 7}])
        self.assertEqual(await w.with_tx(
            '[[:db/add [:user/email "with@x.org"] :user/age 8]]').q(age), 8)
        self.assertIsNone(await self.c.q(age))

    async def test_datoms_and_log_streams(self):
        r = await self.c.transact([{":db/id": "d", ":user/email": "d@x.org",
                                    ":user/age": 5001}])
        got = [d.v async for d in self.c.datoms("avet", ":user/age", 5001)]
        self.assertEqual(got, [5001])
        txs = [t async for t in self.c.tx_range(r.tx, r.tx + 1)]
        self.assertEqual([t.tx for t in txs], [r.tx])
        self.assertEqual(len(txs[0].datoms), r.datom_count)

        # Subscribe from r.tx: the stream catches up with it, then follows
        # without gap, so a commit made after it arrives next, whole.
        live = self.c.subscribe(from_tx=r.tx)
        first = await live.__anext__()
        self.assertEqual(first.tx, r.tx)
        later = await self.c.transact([{":user/email": "live@x.org"}])
        t = await live.__anext__()
        self.assertEqual(t.tx, later.tx)
        self.assertEqual(len(t.datoms), later.datom_count)
        await live.aclose()

    async def test_schema_stats_databases_backup_import(self):
        s = await self.c.schema()
        self.assertEqual(s.attributes[":user/email"].unique,
                         ":db.unique/identity")
        st = await self.c.stats()
        self.assertGreaterEqual(st.attributes[":user/email"].datoms, ROWS)
        self.assertTrue((await self.c.ping()).startswith("mentatd "))
        await self.c.health()
        b = await self.c.backup(os.path.join(self.backups, "aio"))
        self.assertGreater(b.files, 0)
        await self.c.create_database("aio-db")
        db = self.c.use("aio-db")
        imp = await db.import_([SCHEMA] + [[{":user/email": "i%d" % i}]
                                           for i in range(5)])
        self.assertEqual(imp.transactions, 6)
        self.assertEqual(await db.q("[:find (count ?e) . :where "
                                    "[?e :user/email]]"), 5)
        self.assertIn("aio-db", await self.c.databases())
        self.assertIn("aio-db", [d.name for d in
                                 await self.c.database_infos()])
        await self.c.delete_database("aio-db")
        self.assertNotIn("aio-db", await self.c.databases())

    async def test_errors(self):
        with self.assertRaises(mc.ParseError) as err:
            await self.c.transact('[{:user/email "x"\n :user/age }]')
        self.assertEqual(err.exception.line, 2)
        with self.assertRaises(mc.ParseError):
            await self.c.query("[:find ?e :where [?e :user/email]")
        with self.assertRaises(mc.ParseError):
            async for _ in self.c.query("[:find ?e :where [?e"):
                pass
        with self.assertRaises(mc.NotFound):
            await self.c.use("nope").schema()
        with self.assertRaises(mc.NotFound):
            async for _ in self.c.use("nope").tx_range():
                pass
        with self.assertRaises(mc.AlreadyExists):
            await self.c.create_database("default")


if __name__ == "__main__":
    mentatd.parse_args()
    unittest.main(verbosity=2)
