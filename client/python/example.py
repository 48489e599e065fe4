#!/usr/bin/python3
"""A tour of mentat_client against a running mentatd.

    mentatd --data-dir /tmp/mentat-example &
    /usr/bin/python3 client/python/example.py [--addr 127.0.0.1:7878]
        [--token TOKEN] [--tls-ca ca.pem]

Needs only python3-grpcio and python3-protobuf: the generated gRPC code
ships in mentat_client/_pb (see README.md)."""

import argparse
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mentat_client import Client, Keyword, ParseError, kw  # noqa: E402

SCHEMA = """[
 {:db/ident :movie/title :db/valueType :db.type/string
  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :movie/year :db/valueType :db.type/long
  :db/cardinality :db.cardinality/one}
 {:db/ident :movie/genre :db/valueType :db.type/keyword
  :db/cardinality :db.cardinality/many}]"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--addr", default="127.0.0.1:7878")
    ap.add_argument("--db", default="default")
    ap.add_argument("--token")
    ap.add_argument("--tls-ca", help="CA certificate (PEM) for TLS")
    args = ap.parse_args()

    with Client(args.addr, args.db, token=args.token,
                root_certificates=args.tls_ca, timeout=30) as c:
        c.transact(SCHEMA)
        # A request id makes the write safe to retry.
        first = c.transact(
            '[{:movie/title "Alien" :movie/year 1979 :movie/genre :sci-fi}'
            ' {:movie/title "Heat" :movie/year 1995 :movie/genre :crime}]',
            request_id="example-" + uuid.uuid4().hex)
        print("committed tx", first.tx, "at", first.tx_instant)
        # tx-data as Python data: dicts are entity maps, tuples are ops;
        # (":movie/title", "Alien") is a lookup ref, kw() a keyword value.
        c.transact([(":db/add", (":movie/title", "Alien"), ":movie/year", 1980),
                    {":movie/title": "Aliens", ":movie/year": 1986,
                     ":movie/genre": [kw(":sci-fi"), kw(":action")]}])

        # Rows arrive in batches; iterating streams them.
        stream = c.query("[:find ?t ?y :where [?m :movie/title ?t] "
                         "[?m :movie/year ?y]]")
        print("columns", stream.columns, "basis", stream.basis_tx)
        for title, year in stream:
            print(" ", title, year)

        # Inputs are Python values; results are Python values.
        print("sci-fi:", c.q("[:find [?t ...] :in $ ?g :where "
                             "[?m :movie/genre ?g] [?m :movie/title ?t]]",
                             Keyword("sci-fi")))
        print("pull:", c.pull("[*]", (":movie/title", "Alien")))
        print("as of the first write:",
              c.as_of(first.tx).pull("[:movie/year]",
                                     (":movie/title", "Alien")))
        print("history of Alien's year:", sorted(c.history().q(
            '[:find ?y ?tx ?added :where [?m :movie/title "Alien"] '
            '[?m :movie/year ?y ?tx ?added]]')))
        print("datoms of :movie/year:",
              [(d.e, d.v) for d in c.datoms("aevt", ":movie/year")])
        print("movie attributes:", sorted(
            a for a in c.schema().attributes if a.namespace == "movie"))
        try:
            c.transact("[{:movie/title }]")
        except ParseError as e:  # a MentatError, as every failure is
            print("refused:", type(e).__name__, "at line", e.line,
                  "column", e.column, "-", e.details)


if __name__ == "__main__":
    main()
