'use strict';
// JS data -> EDN text (toEdn, txEdn), Value decoding, and the error
// classes, without a server.

const test = require('node:test');
const assert = require('node:assert/strict');
const m = require('..');
const { fromValue, toValue } = require('../lib/values');
const { errorFor } = require('../lib/errors');
const { status } = require('@grpc/grpc-js');

test('scalars print as EDN', () => {
  assert.equal(m.toEdn(null), 'nil');
  assert.equal(m.toEdn(true), 'true');
  assert.equal(m.toEdn(-42), '-42');
  assert.equal(m.toEdn(2n ** 63n), '9223372036854775808N');
  assert.equal(m.toEdn(-(2n ** 63n)), '-9223372036854775808');
  assert.equal(m.toEdn(9007199254740993n), '9007199254740993');
  assert.equal(m.toEdn(2.5), '2.5');
  assert.equal(m.toEdn(new m.Double(3)), '3.0');
  assert.equal(m.toEdn(1e300), '1e+300');
  assert.equal(m.toEdn(NaN), '##NaN');
  assert.equal(m.toEdn(-Infinity), '##-Inf');
  assert.equal(m.toEdn(2 ** 60), '1152921504606847000.0'); // not exact: a double
  assert.equal(m.toEdn(new m.BigDec('12.50')), '12.50M');
  assert.equal(m.toEdn(m.kw('user/email')), ':user/email');
  assert.equal(m.toEdn(new m.Char('\n')), '\\newline');
  assert.equal(m.toEdn(new m.Edn('[:a 1]')), '[:a 1]');
  assert.throws(() => m.kw(':has space'), /not an EDN keyword/);
});

test('strings are escaped', () => {
  assert.equal(m.toEdn('say "hi"\\'), String.raw`"say \"hi\"\\"`);
  assert.equal(m.toEdn('a\nb\tc\rd'), String.raw`"a\nb\tc\rd"`);
  assert.equal(m.toEdn('\u0000\u001f\u007f'), String.raw`"\u0000\u001f\u007f"`);
  assert.equal(m.toEdn('é😀'), '"é😀"');
  assert.throws(() => m.toEdn('\ud800'), /lone surrogate/);
});

test('instants keep microseconds', () => {
  assert.equal(m.toEdn(new Date(Date.UTC(2024, 1, 29, 12, 30, 1, 250))),
    '#inst "2024-02-29T12:30:01.250000Z"');
  const i = new m.Instant(1709209801250001n);
  assert.ok(i instanceof Date);
  assert.equal(i.getTime(), 1709209801250);
  assert.equal(m.toEdn(i), '#inst "2024-02-29T12:30:01.250001Z"');
  assert.equal(new m.Instant(-1n).toISOString(), '1969-12-31T23:59:59.999999Z');
  assert.deepEqual(toValue(i), { instant_micros: '1709209801250001' });
});

test('uris and symbols', () => {
  assert.equal(m.toEdn(new m.Uri('https://x/"q"')), '#uri "https://x/\\"q\\""');
  assert.equal(m.toEdn(new URL('https://example.com/a b')), '#uri "https://example.com/a%20b"');
  assert.equal(m.toEdn(new m.Sym('ns/s')), 'ns/s');
  assert.deepEqual(toValue(new m.Uri('urn:x')), { uri: 'urn:x' });
  const u = fromValue({ kind: 'uri', uri: 'urn:x' });
  assert.ok(u instanceof m.Uri);
  assert.ok(u.equals(new m.Uri('urn:x')));
  assert.equal(String(u), 'urn:x');
});

test('collections, uuids, bytes', () => {
  const u = new m.Uuid('F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6');
  assert.equal(m.toEdn(u), '#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"');
  assert.equal(m.toEdn(Buffer.from([0, 255])), '#bytes "AP8="');
  assert.equal(m.toEdn([1, [2n, 'x']]), '[1 [2 "x"]]');
  assert.equal(m.toEdn(new Set([1])), '#{1}');
  assert.equal(m.toEdn({ ':a': [null], b: 1 }), '{:a [nil] "b" 1}');
  assert.equal(m.toEdn(new m.LookupRef(':user/email', 'a@x')), '[:user/email "a@x"]');
});

test('tx-data from entity maps and ops', () => {
  assert.equal(m.txEdn('[{:a/b 1}]'), '[{:a/b 1}]');
  assert.equal(
    m.txEdn([{ ':db/id': 'ann', ':user/email': 'ann@x.org', 'user/age': 41,
      ':user/role': [m.kw(':role/admin')], ':user/friend': { ':user/email': 'bob@x.org' },
      ':user/boss': new m.LookupRef(':user/email', 'eve@x.org') }]),
    '[{:db/id "ann" :user/email "ann@x.org" :user/age 41 :user/role [:role/admin] ' +
    ':user/friend {:user/email "bob@x.org"} :user/boss [:user/email "eve@x.org"]}]');
  assert.equal(
    m.txEdn([[':db/add', 't', ':user/name', 'Ann'],
      [':db/retract', [':user/email', 'b'], ':user/age', 3],
      [':db/retractEntity', 17592186045420n],
      [':db/cas', 5, ':user/age', null, 4],
      [':my/fn', 'arg']]),
    '[[:db/add "t" :user/name "Ann"] [:db/retract [:user/email "b"] :user/age 3] ' +
    '[:db/retractEntity 17592186045420] [:db/cas 5 :user/age nil 4] [:my/fn "arg"]]');
  // A pair starting with a namespaced keyword is a lookup ref anywhere.
  assert.equal(m.txEdn([{ ':movie/director': [':person/name', 'R'], ':movie/tags': [':x', 'y'] }]),
    '[{:movie/director [:person/name "R"] :movie/tags [":x" "y"]}]');
  // A string value stays a string.
  assert.equal(m.txEdn([{ ':a/b': ':not/kw' }]), '[{:a/b ":not/kw"}]');
  assert.throws(() => m.txEdn([{ ':a/b': 1 }, 42]), /operation 1: an operation/);
  assert.throws(() => m.txEdn([[':db/add', 1.5, ':a/b', 1]]), /operation 0 :db\/add: an entity/);
  assert.throws(() => m.txEdn([{ ':a/b': Symbol('x') }]), /operation 0 :a\/b/);
  assert.throws(() => m.txEdn({ ':a/b': 1 }), /tx-data is EDN text or an array/);
});

test('values decode exactly', () => {
  assert.equal(fromValue({ kind: 'long_value', long_value: '9007199254740993' }), 9007199254740993n);
  assert.equal(fromValue({ kind: 'ref', ref: '17592186045418' }), 17592186045418n);
  assert.ok(fromValue({ kind: 'keyword', keyword: 'a/b' }).equals(m.kw(':a/b')));
  const pulled = fromValue({ kind: 'map', map: { entries: [
    { key: { kind: 'keyword', keyword: 'user/age' }, value: { kind: 'long_value', long_value: '3' } }] } });
  assert.deepEqual(pulled, { ':user/age': 3n });
  const other = fromValue({ kind: 'map', map: { entries: [
    { key: { kind: 'long_value', long_value: '1' }, value: { kind: 'nil', nil: true } }] } });
  assert.ok(other instanceof Map);
  assert.equal(other.get(1n), null);
});

test('one error class per code', () => {
  const cases = [
    [status.INVALID_ARGUMENT, m.InvalidArgument], [status.NOT_FOUND, m.NotFound],
    [status.ALREADY_EXISTS, m.AlreadyExists], [status.FAILED_PRECONDITION, m.FailedPrecondition],
    [status.RESOURCE_EXHAUSTED, m.ResourceExhausted], [status.UNAVAILABLE, m.Unavailable],
    [status.DEADLINE_EXCEEDED, m.DeadlineExceeded], [status.CANCELLED, m.Cancelled],
    [status.PERMISSION_DENIED, m.PermissionDenied], [status.UNAUTHENTICATED, m.Unauthenticated],
    [status.ABORTED, m.Aborted], [status.INTERNAL, m.Internal], [status.DATA_LOSS, m.Internal],
  ];
  for (const [code, Cls] of cases) {
    const e = errorFor(code, 'why');
    assert.equal(e.constructor, Cls);
    assert.ok(e instanceof m.MentatError && e instanceof Error);
    assert.equal(e.code, code);
    assert.equal(e.details, 'why');
    assert.equal(e.line, null);
  }
  const p = errorFor(status.INVALID_ARGUMENT, "line 3, column 14: unexpected ']'");
  assert.ok(p instanceof m.ParseError && p instanceof m.InvalidArgument);
  assert.deepEqual([p.line, p.column], [3, 14]);
  assert.match(p.message, /^INVALID_ARGUMENT: line 3/);
});
