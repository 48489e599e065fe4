'use strict';
// @mentat/client against a live mentatd ($MENTATD): transact with JS data
// (every value type read back as written, longs past 2^53 exact), queries
// streamed in batches, pull, the log streams, the other RPCs, and errors as
// classes.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const m = require('..');
const { Mentatd } = require('./mentatd');

const { kw } = m;
const ROWS = 2500; // more than two of the server's default batches

function attr(ident, type, more = {}) {
  return {
    ':db/ident': kw(ident), ':db/valueType': kw(`:db.type/${type}`),
    ':db/cardinality': kw(more.many ? ':db.cardinality/many' : ':db.cardinality/one'),
    ...Object.fromEntries(Object.entries(more).filter(([k]) => k !== 'many')),
  };
}

const SCHEMA = [
  attr(':user/email', 'string', { ':db/unique': kw(':db.unique/identity') }),
  attr(':user/name', 'string'),
  attr(':user/age', 'long', { ':db/index': true }),
  attr(':user/big', 'bigint'),
  attr(':user/score', 'double'),
  attr(':user/balance', 'bigdec'),
  attr(':user/joined', 'instant'),
  attr(':user/key', 'uuid'),
  attr(':user/admin', 'boolean'),
  attr(':user/role', 'ref', { many: true }),
  attr(':user/boss', 'ref'),
  attr(':user/cohort', 'long'),
  attr(':user/site', 'uri'),
  attr(':user/handle', 'symbol'),
  { ':db/ident': kw(':role/admin') }, { ':db/ident': kw(':role/dev') },
];

let server;
let backups;
let c;

test.before(async () => {
  backups = fs.mkdtempSync(path.join(os.tmpdir(), 'mentat-node-backups-'));
  server = await new Mentatd({ args: [`--backup-dir=${backups}`] }).start();
  c = new m.Client(server.addr, { timeoutMs: 60000 });
  await c.transact(SCHEMA);
  const users = [];
  for (let i = 0; i < ROWS; i++) users.push({ ':user/email': `bulk${i}@x.org`, ':user/age': i % 90, ':user/cohort': 1 });
  await c.transact(users);
});

test.after(async () => {
  if (c) c.close();
  if (server) await server.cleanup();
  fs.rmSync(backups, { recursive: true, force: true });
});

test('every value type reads back as written', async () => {
  const joined = new m.Instant(1709209801123456n);
  const key = new m.Uuid('f81d4fae-7dec-11d0-a765-00a0c91e6bf6');
  const name = 'Ann "the \\ admin"\n\ttab é 😀 \u0001';
  const r = await c.transact([
    { ':db/id': 'boss', ':user/email': 'boss@x.org' },
    { ':db/id': 'ann', ':user/email': 'ann@x.org', ':user/name': name,
      ':user/age': -(2n ** 62n), ':user/big': 2n ** 80n, ':user/score': 1e300,
      ':user/balance': new m.BigDec('-0.125'), ':user/joined': joined, ':user/key': key,
      ':user/admin': false, ':user/role': [kw(':role/admin'), kw(':role/dev')], ':user/boss': 'boss' },
  ]);
  assert.deepEqual(Object.keys(r.tempids).sort(), ['ann', 'boss']);
  assert.equal(typeof r.tx, 'bigint');
  // Entity ids (4 << 42 | n) are bigints, and so is every long.
  assert.ok(r.tempids.ann > 4n << 42n);
  const got = await c.pull('[:user/name :user/age :user/big :user/score :user/balance :user/joined ' +
    ':user/key :user/admin {:user/role [:db/ident]} {:user/boss [:db/id :user/email]}]', r.tempids.ann);
  assert.equal(got[':user/name'], name);
  assert.equal(got[':user/age'], -(2n ** 62n));
  assert.equal(got[':user/big'], 2n ** 80n);
  assert.equal(got[':user/score'], 1e300);
  assert.equal(got[':user/balance'].text, '-0.125');
  assert.ok(got[':user/joined'] instanceof Date);
  assert.equal(got[':user/joined'].micros, 1709209801123456n);
  assert.ok(got[':user/key'].equals(key));
  assert.equal(got[':user/admin'], false);
  assert.deepEqual(got[':user/role'].map((x) => String(x[':db/ident'])), [':role/admin', ':role/dev']);
  assert.equal(got[':user/boss'][':db/id'], r.tempids.boss);
  assert.equal(await c.q('[:find ?e . :in $ ?n :where [?e :user/name ?n]]', [name]), r.tempids.ann);
  assert.deepEqual(await c.pull('[:user/email]', r.tempids.boss), { ':user/email': 'boss@x.org' });
  // A long past 2^53 (2^53 + 1 is no JS number) goes in and comes back
  // exactly, as tx-data and as a query input.
  const odd = 2n ** 53n + 1n;
  const w = await c.transact([{ ':db/id': 'odd', ':user/email': 'odd@x.org', ':user/age': odd }]);
  assert.equal(await c.q('[:find ?a . :where [?e :user/email "odd@x.org"] [?e :user/age ?a]]'), odd);
  assert.equal(await c.q('[:find ?e . :in $ ?a :where [?e :user/age ?a]]', [odd]), w.tempids.odd);
  assert.equal(await c.q('[:find ?e . :in $ ?a :where [?e :user/age ?a]]', [odd - 1n]), null);
});

test('uri and symbol values: tx-data, inputs, results, pull, bad uris', async () => {
  const r = await c.transact([{ ':db/id': 'u', ':user/email': 'uri@x.org',
    ':user/site': new m.Uri('https://example.com/a?b#c'), ':user/handle': new m.Sym('ns/ann') }]);
  const got = await c.pull('[:user/site :user/handle]', r.tempids.u);
  assert.ok(got[':user/site'] instanceof m.Uri);
  assert.equal(got[':user/site'].text, 'https://example.com/a?b#c');
  assert.ok(got[':user/handle'] instanceof m.Sym);
  assert.equal(got[':user/handle'].text, 'ns/ann');
  // As query inputs (the uri and symbol Value fields), a URL too.
  assert.equal(await c.q('[:find ?e . :in $ ?s ?h :where [?e :user/site ?s] [?e :user/handle ?h]]',
    [new URL('https://example.com/a?b#c'), new m.Sym('ns/ann')]), r.tempids.u);
  await assert.rejects(c.transact([{ ':user/email': 'bad-uri@x.org', ':user/site': new m.Uri('https://a b/') }]),
    (e) => e instanceof m.InvalidArgument && /invalid URI "https:\/\/a b\/"/.test(e.message));
  assert.equal(await c.q('[:find ?e . :where [?e :user/email "bad-uri@x.org"]]'), null);
});

test('dry runs and withTx views: nothing commits, every read sees the speculative value', async () => {
  await c.transact('[{:user/email "wit@x.org" :user/name "Wit"}]');
  const name = '[:find ?n . :where [?e :user/email "wit@x.org"] [?e :user/name ?n]]';
  const rename = [{ ':db/id': 'w', ':user/email': 'wit@x.org', ':user/name': 'Witt' }];
  const dry = await c.transact(rename, { dryRun: true, returnDatoms: true });
  assert.equal(dry.dryRun, true);
  assert.ok(dry.datoms.some((d) => d.added && d.v === 'Witt'));
  assert.ok(dry.datoms.some((d) => !d.added && d.v === 'Wit'));
  assert.equal(await c.q(name), 'Wit'); // nothing committed
  // The commit gets the dry run's ids.
  const real = await c.transact(rename);
  assert.equal(real.dryRun, false);
  assert.deepEqual([real.tx, real.tempids], [dry.tx, dry.tempids]);
  await c.transact('[[:db/add [:user/email "wit@x.org"] :user/name "Wit"]]');

  const w = c.withTx(rename);
  assert.equal(w.withTxData.length, 1);
  assert.equal(c.withTxData.length, 0);
  assert.equal(await w.q(name), 'Witt');
  assert.equal((await w.pull('[:user/name]', [':user/email', 'wit@x.org']))[':user/name'], 'Witt');
  assert.equal((await w.pullMany('[:user/name]', [[':user/email', 'wit@x.org']]))[0][':user/name'], 'Witt');
  const names = [];
  for await (const d of w.datoms('eavt', [[':user/email', 'wit@x.org'], ':user/name'])) names.push(d.v);
  assert.deepEqual(names, ['Witt']);
  // Explain plans against the speculative value: :pet/name exists only there.
  const pets = c.withTx([{ ':db/ident': kw(':pet/name'), ':db/valueType': kw(':db.type/string'),
    ':db/cardinality': kw(':db.cardinality/one') }]);
  assert.match(await pets.explain('[:find ?n :where [_ :pet/name ?n]]'), /:pet\/name/);
  await assert.rejects(c.explain('[:find ?n :where [_ :pet/name ?n]]'), (e) => e instanceof m.InvalidArgument);
  // A view of a view chains its transactions.
  const gone = w.withTx('[[:db/retract [:user/email "wit@x.org"] :user/name "Witt"]]');
  assert.equal(await gone.q(name), null);
  assert.equal(await c.q(name), 'Wit');
  await assert.rejects(c.withTx('[[:db/add "x" :user/nope 1]]').q(name),
    (e) => e instanceof m.InvalidArgument && /with_tx_data\[0\]/.test(e.message) && /:user\/nope/.test(e.message));
});

test('queries stream in batches; find shapes', async () => {
  const stream = await c.query('[:find ?e ?m :where [?e :user/email ?m] [?e :user/cohort 1]]').ready();
  assert.deepEqual(stream.columns, ['?e', '?m']);
  const sizes = [];
  for await (const b of stream.batches()) sizes.push(b.length);
  assert.ok(sizes.length >= 3, String(sizes));
  assert.equal(sizes.reduce((a, b) => a + b, 0), ROWS);
  assert.equal(stream.rowsSoFar, BigInt(ROWS));
  let n = 0;
  for await (const row of c.query('[:find ?m :where [?e :user/email ?m] [?e :user/cohort 1]]', [], { batchRows: 100 })) {
    assert.equal(typeof row[0], 'string');
    n++;
  }
  assert.equal(n, ROWS);
  const ages = await c.q('[:find [?a ...] :in $ [?m ...] :where [?e :user/email ?m] [?e :user/age ?a]]',
    [['bulk1@x.org', 'bulk2@x.org']]);
  assert.deepEqual(ages.sort(), [1n, 2n]);
  assert.equal(await c.q('[:find (count ?e) . :where [?e :user/age 3] [?e :user/cohort 1]]'), 28n);
  assert.equal(await c.q('[:find ?e . :in $ ?m :where [?e :user/email ?m]]', ['nobody@x.org']), null);
  assert.equal(await c.q('[:find ?e . :in $ ?m :where [?e :user/email ?m]]', [new m.Json('"bulk7@x.org"')]),
    await c.q('[:find ?e . :in $ ?m :where [?e :user/email ?m]]', [new m.Edn('"bulk7@x.org"')]));
  assert.equal((await c.q('[:find ?e :where [?e :user/age _]]', [], { limit: 10 })).length, 10);
});

test('a small query over several messages: QueryFirst, then the stream', async () => {
  const q = '[:find ?e ?m :where [?e :user/age 3] [?e :user/email ?m]]';
  const whole = await c.q(q);
  assert.equal(whole.length, 28);
  const stream = await c.query(q, [], { batchRows: 10 }).ready();
  assert.deepEqual(stream.columns, ['?e', '?m']);
  const sizes = [];
  const rows = [];
  for await (const b of stream.batches()) { sizes.push(b.length); rows.push(...b); }
  assert.deepEqual(sizes, [10, 10, 8]);
  assert.equal(stream.rowsSoFar, 28n);
  const key = (r) => `${r[0]} ${r[1]}`;
  assert.deepEqual(rows.map(key).sort(), whole.map(key).sort());
});

test('as_of, since, history', async () => {
  const first = await c.transact([{ ':user/email': 'carol@x.org', ':user/age': 30 }]);
  const second = await c.transact([[':db/add', [':user/email', 'carol@x.org'], ':user/age', 31]]);
  const q = '[:find ?a . :where [?e :user/email "carol@x.org"] [?e :user/age ?a]]';
  assert.equal(await c.q(q), 31n);
  assert.equal(await c.asOf(first.tx).q(q), 30n);
  assert.equal(await c.asOf(first.basisBefore).q(q), null);
  assert.equal(await c.asOf(first.txInstant).q(q), 30n);
  assert.equal(await c.since(first.tx).q('[:find ?a . :where [?e :user/age ?a]]'), 31n);
  const hist = await c.history().q('[:find ?a ?tx ?added :where [?e :user/email "carol@x.org"] [?e :user/age ?a ?tx ?added]]');
  const key = (r) => `${r[0]} ${r[1]} ${r[2]}`;
  assert.deepEqual(hist.map(key).sort(), [
    [30n, first.tx, true], [30n, second.tx, false], [31n, second.tx, true]].map(key).sort());
});

test('pull, pullMany, lookup refs', async () => {
  await c.transact([{ ':user/email': 'bob@x.org', ':user/name': 'Bob', ':user/role': [kw(':role/admin')] }]);
  // A lookup ref resolves against the database before the transaction.
  await c.transact([{ ':user/email': 'bobs@x.org', ':user/boss': [':user/email', 'bob@x.org'] }]);
  assert.deepEqual(await c.pull('[{:user/boss [:user/name]}]', [':user/email', 'bobs@x.org']),
    { ':user/boss': { ':user/name': 'Bob' } });
  const bob = await c.pull('[:user/name {:user/role [:db/ident]}]', [':user/email', 'bob@x.org']);
  assert.equal(bob[':user/name'], 'Bob');
  assert.ok(bob[':user/role'][0][':db/ident'].equals(kw(':role/admin')));
  assert.deepEqual(await c.pull('[:db/ident]', kw(':role/dev')), { ':db/ident': kw(':role/dev') });
  const many = await c.pullMany('[:user/age]', [[':user/email', 'bulk5@x.org'], new m.LookupRef(':user/email', 'none@x.org')]);
  assert.deepEqual(many, [{ ':user/age': 5n }, null]);
});

test('datoms, txRange, subscribe', async () => {
  const r = await c.transact([{ ':db/id': 'd', ':user/email': 'datoms@x.org', ':user/age': 5001 }]);
  const got = [];
  for await (const d of c.datoms('avet', [':user/age', 5001])) got.push(d);
  assert.deepEqual(got.map((d) => [d.e, d.v, d.tx, d.added]), [[r.tempids.d, 5001n, r.tx, true]]);
  let n = 0;
  for await (const d of c.datoms('eavt', [[':user/email', 'datoms@x.org']])) { n++; assert.equal(d.e, r.tempids.d); }
  assert.equal(n, 2);
  const txs = [];
  for await (const t of c.txRange(r.tx, r.tx + 1n)) txs.push(t);
  assert.deepEqual(txs.map((t) => t.tx), [r.tx]);
  assert.equal(txs[0].datoms.length, r.datomCount);

  // Subscribe from r.tx: catches up with it, then sees a later commit.
  const live = c.subscribe({ fromTx: r.tx });
  const first = await live.next();
  assert.equal(first.value.tx, r.tx);
  const later = await c.transact([{ ':user/email': 'live@x.org' }]);
  const next = await live.next();
  assert.equal(next.value.tx, later.tx);
  await live.return();
});

test('schema, stats, explain, databases, backup, import', async () => {
  const s = await c.schema();
  assert.ok(s.attributes[':user/email'].unique.equals(kw(':db.unique/identity')));
  assert.equal(s.attributes[':user/role'].many, true);
  assert.equal(typeof s.idents[':role/admin'], 'bigint');
  const st = await c.stats();
  assert.ok(st.attributes[':user/email'].datoms >= BigInt(ROWS));
  assert.ok(st.transactor.transactions > 0n);
  assert.match(await c.explain('[:find ?e :where [?e :user/age 3]]', [], { profile: true }), /:user\/age/);
  assert.match(await c.ping(), /^mentatd /);
  await c.health();
  const b = await c.backup(path.join(backups, 'node'));
  assert.ok(b.files > 0n);
  await c.createDatabase('node-db');
  const db = c.use('node-db');
  const imp = await db.import([SCHEMA, ...Array.from({ length: 5 }, (_, i) => [{ ':user/email': `i${i}` }])], { perMessage: 2 });
  assert.equal(imp.transactions, 6n);
  assert.equal(await db.q('[:find (count ?e) . :where [?e :user/email]]'), 5n);
  assert.ok((await c.databases()).includes('node-db'));
  assert.ok((await c.databaseInfos()).some((d) => d.name === 'node-db' && d.basisTx === imp.basisTx));
  await c.deleteDatabase('node-db');
  assert.ok(!(await c.databases()).includes('node-db'));
});

test('errors are classes', async () => {
  await assert.rejects(c.transact('[{:user/email "x"\n :user/age }]'), (e) => {
    assert.ok(e instanceof m.ParseError);
    assert.equal(e.line, 2);
    return true;
  });
  await assert.rejects(c.query('[:find ?e :where [?e :user/email]').ready(), m.ParseError);
  await assert.rejects(c.transact([{ ':user/age': 'not a number' }]), m.InvalidArgument);
  await assert.rejects(c.use('nope').schema(), m.NotFound);
  await assert.rejects(c.pull('[*]', [':user/email', 'nobody@x.org']), m.NotFound);
  await assert.rejects(c.createDatabase('default'), m.AlreadyExists);
  await c.transact([{ ':user/email': 'u1@x.org', ':user/age': 5 }]);
  await assert.rejects(c.transact([[':db/cas', [':user/email', 'u1@x.org'], ':user/age', 4, 6]]), m.FailedPrecondition);
  await assert.rejects(c.backup(path.join(os.tmpdir(), `outside-${process.pid}`)), m.PermissionDenied);
  const nobody = new m.Client('127.0.0.1:1', { timeoutMs: 2000 });
  await assert.rejects(nobody.ping(), m.Unavailable);
  await assert.rejects(nobody.health(), m.Unavailable);
  nobody.close();
  await assert.rejects(async () => {
    for await (const _ of c.use('nope').txRange()) { /* none */ }
  }, m.NotFound);
  // Bad JS data is refused before anything is sent.
  await assert.rejects(c.transact([42]), TypeError);
});

test('a token-protected server', async () => {
  const s = await new Mentatd({ args: ['--auth-token=node-s3cret'], token: 'node-s3cret' }).start();
  try {
    for (const token of [undefined, 'wrong']) {
      const bad = new m.Client(s.addr, { token, timeoutMs: 10000 });
      await assert.rejects(bad.transact('[]'), m.Unauthenticated);
      await assert.rejects(bad.query('[:find ?e :where [?e :db/ident]]').ready(), m.Unauthenticated);
      bad.close();
    }
    const good = new m.Client(s.addr, { token: 'node-s3cret', timeoutMs: 10000 });
    assert.ok((await good.transact('[]')).tx > 0n);
    good.close();
  } finally {
    await s.cleanup();
  }
});

test('query and datoms streams resume across a server crash', async () => {
  const s = await new Mentatd().start();
  const rc = new m.Client(s.addr, { timeoutMs: 60000 });
  try {
    await rc.transact(SCHEMA);
    const pad = 'x'.repeat(2000); // 16 MB: past gRPC's flow-control windows
    for (let k = 0; k < 4; k++) {
      await rc.transact(Array.from({ length: 2000 }, (_, i) => ({
        ':user/email': `r${k * 2000 + i}@x.org`, ':user/name': `${pad}${k * 2000 + i}`,
      })));
    }
    const want = [];
    for await (const d of rc.datoms('aevt', [':user/name'])) want.push(`${d.e} ${d.v}`);
    assert.equal(want.length, 8000);

    const stream = rc.query('[:find ?e ?n :where [?e :user/name ?n]]', [], { batchRows: 100 });
    const batches = stream.batches();
    const rows = [...(await batches.next()).value];
    const datoms = rc.datoms('aevt', [':user/name'], { batchSize: 100 });
    const got = [];
    for (let i = 0; i < 100; i++) { const d = (await datoms.next()).value; got.push(`${d.e} ${d.v}`); }

    await s.kill();
    await s.restart();
    await rc.transact([{ ':user/email': 'late@x.org', ':user/name': 'L' }]);

    for await (const b of batches) rows.push(...b);
    assert.ok(stream.resumed >= 1);
    // The basis before the crash: every row once, the later write unseen.
    assert.equal(rows.length, 8000);
    assert.equal(new Set(rows.map((r) => r[0])).size, 8000);
    assert.equal(stream.rowsSoFar, 8000n);
    for await (const d of datoms) got.push(`${d.e} ${d.v}`);
    assert.deepEqual(got, want);
  } finally {
    rc.close();
    await s.cleanup();
  }
});
