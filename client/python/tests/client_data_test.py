"""mentat_client against a live mentatd, the parts client_test.py does not
cover: transact() with Python data (every value type read back as it was
written), an exception class per error kind as the server answers it, and
the RPCs of the C++ client: datoms, schema, stats, backup, import, health,
databases with their figures.

Run by CTest: client_data_test.py --mentatd PATH."""

import datetime
import decimal
import os
import sys
import shutil
import tempfile
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mentatd  # noqa: E402
import mentat_client as mc  # noqa: E402
from mentat_client import Client, Edn, LookupRef, kw  # noqa: E402

UTC = datetime.timezone.utc


def schema_data():
    def attr(ident, type_, many=False, **more):
        a = {":db/ident": kw(ident), ":db/valueType": kw(":db.type/" + type_),
             ":db/cardinality": kw(":db.cardinality/many" if many else
                                   ":db.cardinality/one")}
        a.update(more)
        return a
    return [
        attr(":user/email", "string", **{":db/unique":
                                         kw(":db.unique/identity")}),
        attr(":user/name", "string", **{":db/doc": 'a "quoted" doc\n'}),
        attr(":user/age", "long", **{":db/index": True}),
        attr(":user/big", "bigint"),
        attr(":user/score", "double"),
        attr(":user/balance", "bigdec"),
        attr(":user/joined", "instant"),
        attr(":user/key", "uuid"),
        attr(":user/admin", "boolean"),
        attr(":user/role", "ref", many=True),
        attr(":user/boss", "ref"),
        attr(":user/tag", "keyword"),
        attr(":user/blob", "bytes"),
        attr(":user/site", "uri"),
        attr(":user/handle", "symbol"),
        attr(":user/pair", "tuple", **{":db/tupleTypes": [
            kw(":db.type/string"), kw(":db.type/long")]}),
        {":db/ident": kw(":role/admin")}, {":db/ident": kw(":role/dev")},
    ]


def ready(addr):
    with Client(addr, timeout=5) as c:
        c.databases()
    return True


class DataTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.backups = tempfile.mkdtemp(prefix="mentat-py-backups-")
        cls.server = mentatd.Mentatd(
            "--backup-dir=" + cls.backups).start(ready)
        cls.c = Client(cls.server.addr, timeout=60)
        cls.c.transact(schema_data())

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.server.cleanup()
        shutil.rmtree(cls.backups, ignore_errors=True)

    def test_every_value_type_reads_back_as_written(self):
        joined = datetime.datetime(2024, 2, 29, 12, 30, 1, 123456, tzinfo=UTC)
        key = uuid.uuid4()
        name = 'Ann "the \\ admin"\n\ttab é 😀 \x01'
        r = self.c.transact([
            {":db/id": "boss", ":user/email": "boss@x.org"},
            {":db/id": "ann", ":user/email": "ann@x.org", ":user/name": name,
             ":user/age": -(1 << 62), ":user/big": 1 << 80,
             ":user/score": 1e300, ":user/balance": decimal.Decimal("-0.125"),
             ":user/joined": joined, ":user/key": key, ":user/admin": False,
             ":user/role": [kw(":role/admin"), kw(":role/dev")],
             ":user/boss": "boss", ":user/tag": kw(":x.y/z-1")},
        ])
        self.assertEqual(set(r.tempids), {"boss", "ann"})
        got = self.c.pull(
            "[:user/name :user/age :user/big :user/score :user/balance "
            ":user/joined :user/key :user/admin :user/tag "
            "{:user/role [:db/ident]} {:user/boss [:user/email]}]",
            r.tempids["ann"])
        self.assertEqual(got, {
            ":user/name": name, ":user/age": -(1 << 62), ":user/big": 1 << 80,
            ":user/score": 1e300, ":user/balance": decimal.Decimal("-0.125"),
            ":user/joined": joined, ":user/key": key, ":user/admin": False,
            ":user/tag": ":x.y/z-1",
            ":user/role": [{":db/ident": ":role/admin"},
                           {":db/ident": ":role/dev"}],
            ":user/boss": {":user/email": "boss@x.org"}})
        # The name went through the server's EDN reader intact: it finds it.
        self.assertEqual(self.c.q("[:find ?e . :in $ ?n :where "
                                  "[?e :user/name ?n]]", name),
                         r.tempids["ann"])

    def test_ops_lookup_refs_and_nested_maps(self):
        self.c.transact([{":user/email": "cas@x.org", ":user/age": 1}])
        who = (":user/email", "cas@x.org")
        r = self.c.transact([
            (":db/cas", who, ":user/age", 1, 2),
            [":db/add", who, ":user/role", kw(":role/dev")],
            {":user/email": "nested@x.org",
             ":user/boss": {":user/email": "newboss@x.org"}},
            {":user/email": "ref@x.org",
             ":user/boss": LookupRef(":user/email", "cas@x.org")},
            {":user/email": "pair@x.org",
             ":user/boss": (":user/email", "cas@x.org")},
            Edn('[:db/add "t" :user/email "edn@x.org"]'),
        ])
        self.assertIn("t", r.tempids)
        self.assertEqual(self.c.pull("[:user/age {:user/role [:db/ident]}]",
                                     who),
                         {":user/age": 2,
                          ":user/role": [{":db/ident": ":role/dev"}]})
        bosses = {tuple(x) for x in self.c.q(
            "[:find ?m ?bm :in $ [?m ...] :where [?e :user/email ?m] "
            "[?e :user/boss ?b] [?b :user/email ?bm]]",
            ["nested@x.org", "ref@x.org", "pair@x.org"])}
        self.assertEqual(bosses, {("nested@x.org", "newboss@x.org"),
                                  ("ref@x.org", "cas@x.org"),
                                  ("pair@x.org", "cas@x.org")})
        self.c.transact([(":db/retract", who, ":user/age", 2),
                         (":db/retractEntity", (":user/email",
                                                "newboss@x.org"))])
        self.assertEqual(self.c.pull("[:user/age]", who), {})
        self.assertEqual(self.c.pull_many("[:user/email]", [
            (":user/email", "newboss@x.org")]), [None])

    def test_uri_and_symbol_values(self):
        r = self.c.transact([{":db/id": "u", ":user/email": "uri@x.org",
                              ":user/site": mc.Uri("https://example.com/a?b"),
                              ":user/handle": mc.Symbol("ns/ann")}])
        got = self.c.pull("[:user/site :user/handle]", r.tempids["u"])
        self.assertEqual(got, {":user/site": "https://example.com/a?b",
                               ":user/handle": "ns/ann"})
        self.assertIsInstance(got[":user/site"], mc.Uri)
        self.assertIsInstance(got[":user/handle"], mc.Symbol)
        # As query inputs: the uri and symbol fields of Value.
        self.assertEqual(self.c.q(
            "[:find ?e . :in $ ?s ?h :where [?e :user/site ?s] "
            "[?e :user/handle ?h]]",
            mc.Uri("https://example.com/a?b"), mc.Symbol("ns/ann")),
            r.tempids["u"])
        with self.assertRaises(mc.InvalidArgument) as err:
            self.c.transact([{":user/email": "bad-uri@x.org",
                              ":user/site": mc.Uri("https://a b/")}])
        self.assertIn('invalid URI "https://a b/"', err.exception.details)
        self.assertIsNone(self.c.q(
            '[:find ?e . :where [?e :user/email "bad-uri@x.org"]]'))

    def test_tuple_values(self):
        r = self.c.transact([{":db/id": "t", ":user/email": "tuple@x.org",
                              ":user/pair": ["a", 2]}])
        self.assertEqual(self.c.pull("[:user/pair]", r.tempids["t"]),
                         {":user/pair": ["a", 2]})
        self.assertEqual(self.c.q("[:find ?e . :in $ ?p :where "
                                  "[?e :user/pair ?p]]", ["a", 2]),
                         r.tempids["t"])
        with self.assertRaises(mc.InvalidArgument) as err:
            self.c.transact([{":user/email": "bad-tuple@x.org",
                              ":user/pair": [1, 2]}])
        self.assertIn("position 1 of :user/pair takes :db.type/string",
                      err.exception.details)

    def test_bytes_values(self):
        # tx-data (EDN) has no bytes literal the server reads: the client
        # prints #bytes "<base64>", and the server says what it refuses.
        with self.assertRaises(mc.InvalidArgument) as err:
            self.c.transact([{":user/email": "blob@x.org",
                              ":user/blob": b"\x00\x01"}])
        self.assertIn("#bytes", err.exception.details)

    def test_error_classes(self):
        with self.assertRaises(mc.ParseError) as err:
            self.c.transact('[{:user/email "x@x.org"\n  :user/age }]')
        self.assertEqual(err.exception.line, 2)
        self.assertIsNotNone(err.exception.column)
        with self.assertRaises(mc.InvalidArgument) as err:
            self.c.transact([{":user/age": "not a number"}])
        with self.assertRaises(mc.NotFound):
            self.c.use("no-such-db").q("[:find ?e :where [?e :db/ident]]")
        with self.assertRaises(mc.NotFound):
            self.c.pull("[*]", (":user/email", "nobody@x.org"))
        self.c.create_database("twice")
        with self.assertRaises(mc.AlreadyExists):
            self.c.create_database("twice")
        self.c.transact([{":user/email": "u1@x.org", ":user/age": 5}])
        with self.assertRaises(mc.FailedPrecondition):
            self.c.transact([(":db/cas", (":user/email", "u1@x.org"),
                              ":user/age", 4, 6)])
        with self.assertRaises(mc.PermissionDenied):
            self.c.backup(os.path.join(tempfile.gettempdir(),
                                       "mentat-outside-%d" % os.getpid()))
        with Client("127.0.0.1:1", timeout=2) as nobody:
            with self.assertRaises(mc.Unavailable):
                nobody.ping()
        with self.assertRaises(mc.MentatError):  # the base catches all
            self.c.q("[:find")

    def test_datoms(self):
        r = self.c.transact([{":db/id": "d", ":user/email": "datoms@x.org",
                              ":user/age": 77}])
        e = r.tempids["d"]
        schema = self.c.schema()
        age = schema.attribute(":user/age").id
        got = {(d.a, d.v) for d in self.c.datoms("eavt", e)}
        self.assertIn((age, 77), got)
        self.assertEqual(len(got), 2)
        by_value = list(self.c.datoms("avet", ":user/age", 77))
        self.assertEqual([(d.e, d.v, d.added) for d in by_value],
                         [(e, 77, True)])
        self.assertEqual(by_value[0].tx, r.tx)
        via_lookup = list(self.c.datoms("eavt", (":user/email",
                                                 "datoms@x.org"),
                                        ":user/email"))
        self.assertEqual([d.v for d in via_lookup], ["datoms@x.org"])
        self.assertEqual(len(list(self.c.datoms("aevt", ":user/email",
                                                limit=1, batch_size=1))), 1)
        with self.assertRaises(ValueError):
            list(self.c.datoms("xyz"))

    def test_schema_and_stats(self):
        s = self.c.schema()
        email = s.attributes[":user/email"]
        self.assertEqual(email.value_type, ":db.type/string")
        self.assertEqual(email.unique, ":db.unique/identity")
        self.assertFalse(email.many)
        self.assertTrue(s.attributes[":user/role"].many)
        self.assertTrue(s.attributes[":user/age"].index)
        self.assertEqual(s.attributes[":user/name"].doc, 'a "quoted" doc\n')
        self.assertIs(s.attribute(email.id), email)
        self.assertIn(":role/admin", s.idents)
        self.assertGreater(s.basis_tx, 0)
        self.c.transact([{":user/email": "stats@x.org"}])
        st = self.c.stats()
        self.assertGreaterEqual(st.attributes[":user/email"].datoms, 1)
        self.assertGreater(st.transactor["transactions"], 0)
        self.assertIn("disk_size_bytes", st.storage)
        self.assertIsInstance(st.basis_tx_instant, datetime.datetime)

    def test_backup_import_databases_health(self):
        self.c.transact([{":user/email": "backup@x.org"}])
        dest = os.path.join(self.backups, "b1")
        b = self.c.backup(dest)
        self.assertGreater(b.files, 0)
        self.assertGreater(b.basis_tx, 0)
        self.assertTrue(os.path.isdir(dest))
        with self.assertRaises(mc.AlreadyExists):
            self.c.backup(dest)

        self.c.create_database("imported")
        imp = self.c.use("imported")
        r = imp.import_([schema_data()[:1]] + [
            [{":user/email": "i%d@x.org" % i}] for i in range(25)] +
            ['[{:user/email "text@x.org"}]'], per_message=10)
        self.assertEqual(r.transactions, 27)
        self.assertIn(r.method, ("ingest", "transact"))
        self.assertEqual(imp.q("[:find (count ?e) . :where "
                               "[?e :user/email]]"), 26)
        infos = {d.name: d for d in self.c.database_infos()}
        self.assertIn("imported", infos)
        self.assertEqual(infos["imported"].basis_tx, r.basis_tx)
        # A bad transaction: the error names its index (1); the ones
        # before it stay imported.
        with self.assertRaises(mc.InvalidArgument) as err:
            imp.import_([[{":user/email": "ok@x.org"}], "[{:nope/x 1}]"])
        self.assertIn("1", err.exception.details)
        self.assertEqual(imp.q('[:find ?e . :where [?e :user/email '
                               '"ok@x.org"]]') is not None, True)
        self.assertIn("imported", self.c.databases())
        self.c.delete_database("imported")
        self.assertNotIn("imported", self.c.databases())
        self.c.health()


if __name__ == "__main__":
    mentatd.parse_args()
    unittest.main(verbosity=2)
