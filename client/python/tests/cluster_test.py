"""mentat_client over several addresses (cluster.py), against a real
primary, a real read replica of it (--replica-of) and an address where
nothing listens: writes sent to the replica follow the primary it names,
a write whose first node is down goes on to the next, reads go round the
nodes and pass the dead one. The routing helpers are checked on their
own first. Every wait polls with a deadline.

Run by CTest: cluster_test.py --mentatd PATH."""

import asyncio
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402

import mentatd  # noqa: E402
from mentat_client import Client, aio  # noqa: E402
from mentat_client.cluster import (named_primary,  # noqa: E402
                                   never_connected, split_addresses)

SCHEMA = ("[{:db/ident :c/v :db/valueType :db.type/long "
          ":db/cardinality :db.cardinality/one}]")
DEADLINE = 60  # seconds: generous for a busy 2-core machine


def ready(addr):
    with Client(addr, timeout=5) as c:
        c.databases()
    return True


def until_ok(f):
    """f()'s result once it does not raise; the last exception at the
    deadline."""
    end = time.time() + DEADLINE
    while True:
        try:
            return f()
        except Exception:
            if time.time() > end:
                raise
            time.sleep(0.05)


class RoutingHelpersTest(unittest.TestCase):

    def test_split_addresses(self):
        self.assertEqual(split_addresses("a:1, b:2 ,,c:3"),
                         ["a:1", "b:2", "c:3"])
        self.assertEqual(split_addresses("unix:/tmp/s"), ["unix:/tmp/s"])
        with self.assertRaises(ValueError):
            split_addresses(" , ")

    def test_named_primary(self):
        fp = grpc.StatusCode.FAILED_PRECONDITION
        self.assertEqual(named_primary(
            fp, "this node is a read replica of h:1: a transaction is "
            "refused here; send writes to the primary at h:1"), "h:1")
        self.assertEqual(named_primary(
            grpc.StatusCode.UNAVAILABLE,
            "not the primary (term 3); the primary at 10.0.0.2:7878."),
            "10.0.0.2:7878")
        self.assertEqual(named_primary(fp, "a uniqueness conflict"), "")
        # Only a refusal names a primary to follow.
        self.assertEqual(named_primary(grpc.StatusCode.INVALID_ARGUMENT,
                                       "the primary at h:1"), "")

    def test_never_connected(self):
        self.assertTrue(never_connected(
            grpc.StatusCode.UNAVAILABLE,
            "failed to connect to all addresses; last error: UNKNOWN: "
            "ipv4:127.0.0.1:9: Failed to connect to remote host: "
            "Connection refused"))
        self.assertFalse(never_connected(grpc.StatusCode.UNAVAILABLE,
                                         "the server is shutting down"))


class ClusterClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.primary = mentatd.Mentatd().start(ready)
        cls.replica = mentatd.Mentatd(
            "--replica-of=" + cls.primary.addr).start(ready)
        cls.nowhere = "127.0.0.1:%d" % mentatd.free_port()

    @classmethod
    def tearDownClass(cls):
        cls.replica.cleanup()
        cls.primary.cleanup()

    def test_writes_follow_the_primary_and_reads_pass_a_dead_node(self):
        with Client(self.replica.addr + ", " + self.nowhere,
                    timeout=20) as c:
            self.assertEqual(c.addresses, [self.replica.addr, self.nowhere])
            # The replica refuses the write naming the primary: the client
            # sends it there, and later writes go there at once.
            until_ok(lambda: c.transact(SCHEMA))
            self.assertEqual(c.primary, self.primary.addr)
            self.assertEqual(len(c.addresses), 3)
            tx = c.transact("[{:c/v 7}]").tx
            # The replica has the write once its basis reaches it.
            with Client(self.replica.addr, timeout=20) as r:
                until_ok(lambda: self.assertGreaterEqual(
                    r.stats().basis_tx, tx))
            # Reads go round replica, dead node and primary: the dead one
            # passes each read on; every read has the value.
            for _ in range(6):
                self.assertIn(7, c.q("[:find [?v ...] :where [_ :c/v ?v]]"))
                self.assertGreaterEqual(c.stats().basis_tx, tx)

    def test_a_write_passes_a_first_node_that_is_down(self):
        with Client(self.nowhere + "," + self.primary.addr,
                    timeout=20) as c:
            until_ok(lambda: c.transact(SCHEMA))
            self.assertEqual(c.primary, self.primary.addr)
            self.assertGreater(c.transact("[{:c/v 8}]").tx, 0)
            self.assertEqual(c.addresses, [self.nowhere, self.primary.addr])

    def test_aio_client_routes_the_same_way(self):
        async def run():
            async with aio.Client(self.nowhere + "," + self.replica.addr,
                                  timeout=20) as c:
                for _ in range(200):
                    try:
                        await c.transact(SCHEMA)
                        break
                    except Exception:
                        await asyncio.sleep(0.05)
                self.assertEqual(c.primary, self.primary.addr)
                tx = (await c.transact("[{:c/v 9}]")).tx
                # Reads go round the dead node and the replica.
                for _ in range(4):
                    self.assertIn("mentatd", await c.ping())
                return tx
        self.assertGreater(asyncio.run(run()), 0)


if __name__ == "__main__":
    mentatd.parse_args()
    unittest.main(verbosity=2)
