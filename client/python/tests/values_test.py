"""Python data -> EDN text (to_edn, tx_edn) and the error classes, without a
server. What the server makes of the text is client_data_test.py's part."""

import datetime
import decimal
import os
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))

import grpc  # noqa: E402

from mentat_client import (Char, Edn, Keyword, LookupRef, Symbol,  # noqa
                           Tagged, kw, to_edn, tx_edn)
from mentat_client import errors  # noqa: E402


class ToEdnTest(unittest.TestCase):

    def test_scalars(self):
        self.assertEqual(to_edn(None), "nil")
        self.assertEqual(to_edn(True), "true")
        self.assertEqual(to_edn(False), "false")
        self.assertEqual(to_edn(-42), "-42")
        self.assertEqual(to_edn(1 << 63), "9223372036854775808N")
        self.assertEqual(to_edn(-(1 << 63)), "-9223372036854775808")
        self.assertEqual(to_edn(2.5), "2.5")
        self.assertEqual(to_edn(1e300), "1e+300")
        self.assertEqual(to_edn(float("nan")), "##NaN")
        self.assertEqual(to_edn(float("-inf")), "##-Inf")
        self.assertEqual(to_edn(decimal.Decimal("12.50")), "12.50M")
        self.assertEqual(to_edn(kw(":user/email")), ":user/email")
        self.assertEqual(to_edn(Keyword("user/email")), ":user/email")
        self.assertEqual(to_edn(Symbol("?e")), "?e")
        self.assertEqual(to_edn(Char("a")), "\\a")
        self.assertEqual(to_edn(Char("\n")), "\\newline")
        self.assertEqual(to_edn(Edn("[:a 1]")), "[:a 1]")

    def test_strings_are_escaped(self):
        self.assertEqual(to_edn('say "hi"\\'), r'"say \"hi\"\\"')
        self.assertEqual(to_edn("a\nb\tc\rd"), r'"a\nb\tc\rd"')
        self.assertEqual(to_edn("\x00\x1f\x7f"), r'"\u0000\u001f\u007f"')
        self.assertEqual(to_edn("é😀"), '"é😀"')
        with self.assertRaisesRegex(ValueError, "lone surrogate"):
            to_edn("\ud800")

    def test_instants_uuids_bytes(self):
        utc = datetime.timezone.utc
        self.assertEqual(
            to_edn(datetime.datetime(2024, 2, 29, 12, 30, 1, 250000,
                                     tzinfo=utc)),
            '#inst "2024-02-29T12:30:01.250000Z"')
        # Naive is UTC; another zone is converted.
        self.assertEqual(to_edn(datetime.datetime(2024, 1, 1)),
                         '#inst "2024-01-01T00:00:00.000000Z"')
        plus2 = datetime.timezone(datetime.timedelta(hours=2))
        self.assertEqual(to_edn(datetime.datetime(2024, 1, 1, 1, tzinfo=plus2)),
                         '#inst "2023-12-31T23:00:00.000000Z"')
        with self.assertRaisesRegex(TypeError, "names no time"):
            to_edn(datetime.date(2024, 1, 1))
        u = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
        self.assertEqual(to_edn(u),
                         '#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"')
        self.assertEqual(to_edn(b"\x00\xff"), '#bytes "AP8="')

    def test_uris_and_tuples(self):
        from mentat_client import Uri
        from mentat_client._pb import mentat_pb2 as pb
        from mentat_client.values import to_python, to_value
        self.assertEqual(to_edn(Uri('https://x/"q"')),
                         '#uri "https://x/\\"q\\""')
        v = to_value(Uri("urn:x"), pb.Value())
        self.assertEqual(v.uri, "urn:x")
        self.assertIsInstance(to_python(v), Uri)
        self.assertEqual(to_python(v), "urn:x")
        # A :db.type/tuple in a datom: a Python tuple, nil elements None.
        t = pb.Value()
        t.tuple.values.add().string_value = "a"
        t.tuple.values.add().nil = True
        self.assertEqual(to_python(t), ("a", None))

    def test_collections(self):
        self.assertEqual(to_edn([1, (2, "x")]), '[1 [2 "x"]]')
        self.assertEqual(to_edn(frozenset([1])), "#{1}")
        self.assertEqual(to_edn({kw(":a"): [None]}), "{:a [nil]}")
        self.assertEqual(to_edn(Tagged("my/tag", [1])), "#my/tag [1]")
        self.assertEqual(to_edn(LookupRef(":user/email", "a@x")),
                         '[:user/email "a@x"]')

    def test_what_edn_cannot_hold_is_refused(self):
        with self.assertRaisesRegex(ValueError, "not an EDN keyword"):
            kw(":has space")
        with self.assertRaisesRegex(ValueError, "not an EDN keyword"):
            to_edn(Keyword('a"b'))
        with self.assertRaises(ValueError):
            to_edn(decimal.Decimal("NaN"))
        with self.assertRaisesRegex(TypeError, "no EDN form for object"):
            to_edn(object())


class TxEdnTest(unittest.TestCase):

    def test_text_passes_as_it_is(self):
        self.assertEqual(tx_edn('[{:a/b "x"}]'), '[{:a/b "x"}]')

    def test_entity_maps(self):
        self.assertEqual(
            tx_edn([{":db/id": "ann", ":user/email": "ann@x.org",
                     "user/age": 41, ":user/role": [kw(":role/admin")],
                     ":user/friend": {":user/email": "bob@x.org"},
                     ":user/boss": LookupRef(":user/email", "eve@x.org")}]),
            '[{:db/id "ann" :user/email "ann@x.org" :user/age 41 '
            ':user/role [:role/admin] :user/friend {:user/email "bob@x.org"} '
            ':user/boss [:user/email "eve@x.org"]}]')
        # :db/id takes every entity form.
        self.assertEqual(tx_edn([{":db/id": (":user/email", "a"), ":a/b": 1},
                                 {":db/id": 17, ":a/b": 2},
                                 {":db/id": kw(":my/ident"), ":a/b": 3}]),
                         '[{:db/id [:user/email "a"] :a/b 1} '
                         '{:db/id 17 :a/b 2} {:db/id :my/ident :a/b 3}]')

    def test_ops(self):
        self.assertEqual(
            tx_edn([(":db/add", "t", ":user/name", "Ann"),
                    [":db/retract", (":user/email", "b"), ":user/age", 3],
                    [":db/retract", 5, ":user/age"],
                    (":db/retractEntity", (":user/email", "c")),
                    (":db/cas", 5, ":user/age", None, 4),
                    (":my/fn", "arg", 1)]),
            '[[:db/add "t" :user/name "Ann"] '
            '[:db/retract [:user/email "b"] :user/age 3] '
            '[:db/retract 5 :user/age] '
            '[:db/retractEntity [:user/email "c"]] '
            '[:db/cas 5 :user/age nil 4] [:my/fn "arg" 1]]')

    def test_a_keyword_pair_is_a_lookup_ref_anywhere(self):
        # As the value of a ref attribute, like EDN's [:person/name "R"];
        # other lists of strings stay strings.
        self.assertEqual(
            tx_edn([{":movie/director": (":person/name", "R"),
                     ":movie/tags": [":x", "y"],
                     ":movie/more": [":a/b", "c", "d"]}]),
            '[{:movie/director [:person/name "R"] :movie/tags [":x" "y"] '
            ':movie/more [":a/b" "c" "d"]}]')
        self.assertEqual(tx_edn([(":db/add", "t", ":movie/director",
                                  [":person/name", "R"])]),
                         '[[:db/add "t" :movie/director [:person/name "R"]]]')

    def test_a_string_value_stays_a_string(self):
        # Only positions that hold keywords make keywords of strs.
        self.assertEqual(tx_edn([{":a/b": ":not/a-keyword"}]),
                         '[{:a/b ":not/a-keyword"}]')
        self.assertEqual(tx_edn([(":db/add", "t", ":a/b", ":x")]),
                         '[[:db/add "t" :a/b ":x"]]')

    def test_bad_shapes_name_the_operation(self):
        with self.assertRaisesRegex(TypeError, "operation 1: an operation"):
            tx_edn([{":a/b": 1}, 42])
        with self.assertRaisesRegex(TypeError, "operation 0 :db/add: an "
                                    "entity is"):
            tx_edn([(":db/add", 1.5, ":a/b", 1)])
        with self.assertRaisesRegex(TypeError, "an attribute is a keyword"):
            tx_edn([{1: 2}])
        with self.assertRaisesRegex(TypeError, "operation 0 :a/b"):
            tx_edn([{":a/b": object()}])
        with self.assertRaisesRegex(TypeError, "not dict"):
            tx_edn({":a/b": 1})


class ErrorsTest(unittest.TestCase):

    def test_one_class_per_code(self):
        cases = {
            grpc.StatusCode.INVALID_ARGUMENT: errors.InvalidArgument,
            grpc.StatusCode.NOT_FOUND: errors.NotFound,
            grpc.StatusCode.ALREADY_EXISTS: errors.AlreadyExists,
            grpc.StatusCode.FAILED_PRECONDITION: errors.FailedPrecondition,
            grpc.StatusCode.RESOURCE_EXHAUSTED: errors.ResourceExhausted,
            grpc.StatusCode.UNAVAILABLE: errors.Unavailable,
            grpc.StatusCode.DEADLINE_EXCEEDED: errors.DeadlineExceeded,
            grpc.StatusCode.CANCELLED: errors.Cancelled,
            grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDenied,
            grpc.StatusCode.UNAUTHENTICATED: errors.Unauthenticated,
            grpc.StatusCode.ABORTED: errors.Aborted,
            grpc.StatusCode.INTERNAL: errors.Internal,
            grpc.StatusCode.DATA_LOSS: errors.Internal,
        }
        for code, cls in cases.items():
            e = errors.error_for(code, "why")
            self.assertIs(type(e), cls)
            self.assertIsInstance(e, errors.MentatError)
            self.assertEqual((e.code, e.details), (code, "why"))
            self.assertIsNone(e.line)

    def test_a_position_makes_a_parse_error(self):
        e = errors.error_for(grpc.StatusCode.INVALID_ARGUMENT,
                             "line 3, column 14: unexpected ']'")
        self.assertIsInstance(e, errors.ParseError)
        self.assertIsInstance(e, errors.InvalidArgument)
        self.assertEqual((e.line, e.column), (3, 14))
        self.assertIn("INVALID_ARGUMENT: line 3", str(e))


if __name__ == "__main__":
    unittest.main(verbosity=2)
