'use strict';
// Client: a connection to mentatd over gRPC (@grpc/grpc-js), with the
// proto loaded at run time by @grpc/proto-loader from
// proto/mentat/v1/mentat.proto: the proto stays the one source of the
// wire contract, with no generated code to keep in step with it and no
// protoc plugin to install (the code generators for JS/TS download
// prebuilt binaries at install time).
//
// Every call returns a Promise or an async iterator; failures reject with
// the classes of errors.js. Longs and entity ids are bigints throughout.

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const V = require('./values');
const { txEdn } = require('./tx');
const { errorFor, fromGrpcError } = require('./errors');

const PROTO = path.join('mentat', 'v1', 'mentat.proto');
// The server accepts messages up to 64 MiB by default; gRPC's client
// default (4 MiB) would refuse a large pull or batch.
const MAX_MESSAGE_BYTES = 64 << 20;

function protoDir() {
  const candidates = [
    process.env.MENTAT_PROTO_DIR,
    path.join(__dirname, '..', 'proto'), // the packed package (npm pack copies it)
    path.join(__dirname, '..', '..', '..', 'proto'), // the repository
  ].filter(Boolean);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, PROTO))) return dir;
  }
  throw new Error(`@mentat/client: ${PROTO} not found in ${candidates.join(', ')} (set MENTAT_PROTO_DIR)`);
}

let loaded = null;
function proto() {
  if (!loaded) {
    const dir = protoDir();
    const def = protoLoader.loadSync(PROTO, {
      includeDirs: [dir], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
    });
    loaded = { def, v1: grpc.loadPackageDefinition(def).mentat.v1 };
  }
  return loaded;
}

const big = (s) => BigInt(s);
const instant = (micros) => new V.Instant(micros);

// --- basis ------------------------------------------------------------------

const latest = (dbTx = 0n) => ({ kind: 'LATEST', point: null, dbTx: BigInt(dbTx) });
const asOf = (point, dbTx = 0n) => ({ kind: 'AS_OF', point, dbTx: BigInt(dbTx) });
const since = (point, dbTx = 0n) => ({ kind: 'SINCE', point, dbTx: BigInt(dbTx) });
const history = (dbTx = 0n) => ({ kind: 'HISTORY', point: null, dbTx: BigInt(dbTx) });

function basisProto(b) {
  const out = { kind: b.kind, db_tx: String(b.dbTx ?? 0n) };
  if (b.point instanceof Date) out.instant_micros = V.dateMicros(b.point).toString();
  else if (b.point !== null && b.point !== undefined) out.tx = String(BigInt(b.point));
  return out;
}

// --- request pieces ---------------------------------------------------------

function entityRef(x) {
  if (typeof x === 'bigint' || (typeof x === 'number' && Number.isSafeInteger(x))) return { id: String(x) };
  if (x instanceof V.Keyword) return { ident: x.text.slice(1) };
  if (typeof x === 'string') return { ident: x.startsWith(':') ? x.slice(1) : x };
  if (x instanceof V.LookupRef) return { lookup: { attribute: x.attribute.text.slice(1), value: V.toValue(x.value) } };
  if (Array.isArray(x) && x.length === 2) {
    const a = String(x[0]);
    return { lookup: { attribute: a.startsWith(':') ? a.slice(1) : a, value: V.toValue(x[1]) } };
  }
  throw new TypeError(`mentat: an entity is an id, an ident or an [attribute, value] lookup ref, not ${String(x)}`);
}

function input(x) {
  if (x instanceof V.Edn) return { edn: x.text };
  if (x instanceof V.Json) return { json: x.text };
  return { value: V.toValue(x) };
}

// A Datoms component: a string starting with ':' is a keyword (an attribute
// or ident), a two-element array starting with one a lookup ref.
function component(x) {
  if (typeof x === 'string' && x.startsWith(':')) return V.toValue(new V.Keyword(x));
  if (Array.isArray(x) && x.length === 2 && typeof x[0] === 'string') {
    return V.toValue([new V.Keyword(x[0]), x[1]]);
  }
  return V.toValue(x);
}

const INDEXES = { eavt: 'EAVT', aevt: 'AEVT', avet: 'AVET', vaet: 'VAET' };

// --- results ----------------------------------------------------------------

const datom = (d) => ({ e: big(d.e), a: big(d.a), v: V.fromValue(d.v), tx: big(d.tx), added: d.added });

function txResult(r) {
  return {
    tx: big(r.tx), txInstant: instant(r.tx_instant_micros),
    basisBefore: big(r.basis_before), basisAfter: big(r.basis_after),
    tempids: Object.fromEntries(Object.entries(r.tempids || {}).map(([k, v]) => [k, big(v)])),
    datomCount: Number(r.datom_count), datoms: (r.datoms || []).map(datom),
    replayed: r.replayed, tempidsMissing: r.tempids_missing, datomsOmitted: r.datoms_omitted,
    dryRun: r.dry_run,
  };
}

const UNIQUE = { UNIQUE_NONE: null, UNIQUE_VALUE: V.kw(':db.unique/value'), UNIQUE_IDENTITY: V.kw(':db.unique/identity') };

function schemaResult(r) {
  const attributes = {};
  for (const a of r.attributes) {
    attributes[':' + a.ident] = {
      id: big(a.id), ident: V.kw(a.ident), valueType: V.kw(a.value_type), many: a.many,
      unique: UNIQUE[a.unique] ?? null, index: a.index, isComponent: a.is_component,
      noHistory: a.no_history, fulltext: a.fulltext, doc: a.doc,
    };
  }
  const idents = {};
  for (const i of r.idents) idents[':' + i.ident] = big(i.entity);
  return { attributes, idents, basisTx: big(r.basis_tx) };
}

const numbers = (m) => Object.fromEntries(Object.entries(m || {}).map(([k, v]) => [k, big(v)]));

function statsResult(r) {
  const attributes = {};
  for (const a of r.attributes) {
    attributes[':' + a.ident] = {
      attribute: big(a.attribute), ident: V.kw(a.ident), datoms: big(a.datoms),
      distinctValues: big(a.distinct_values),
      valueCounts: (a.value_counts || []).map((c) => ({ value: V.fromValue(c.value), count: big(c.count) })),
    };
  }
  return {
    basisTx: big(r.basis_tx), basisTxInstant: instant(r.basis_tx_instant_micros), attributes,
    transactor: numbers(r.transactor), storage: numbers(r.storage),
  };
}

function shape(findKind, rows) {
  switch (findKind) {
    case 'FIND_COLLECTION': return rows.map((r) => r[0]);
    case 'FIND_TUPLE': return rows.length ? rows[0] : null;
    case 'FIND_SCALAR': return rows.length ? rows[0][0] : null;
    default: return rows;
  }
}

// Joins the parts of transactions TxRange and Subscribe split across
// messages (same tx, each but the last `continued`).
async function* wholeTransactions(messages) {
  let partial = null;
  for await (const m of messages) {
    for (const t of m.transactions) {
      if (partial && partial.tx !== big(t.tx)) { yield partial; partial = null; }
      if (!partial) partial = { tx: big(t.tx), txInstant: instant(t.tx_instant_micros), datoms: [] };
      for (const d of t.datoms) partial.datoms.push(datom(d));
      if (!t.continued) { yield partial; partial = null; }
    }
  }
  if (partial) yield partial;
}

const isBroken = (e) => e && e.code === grpc.status.UNAVAILABLE;

/**
 * A query's rows as they arrive. `for await (const row of stream)` yields
 * rows (arrays); `batches()` one array of rows per message; `ready()`
 * resolves once the first message is read, with `columns`, `findKind` and
 * `basisTx` set. A stream that breaks with UNAVAILABLE resumes from its
 * last resume token (up to `resumeRetries` times): no row lost or repeated.
 */
class QueryStream {
  constructor(client, request, resumeRetries) {
    this._client = client;
    this._request = request;
    this._retries = resumeRetries;
    this._call = null;
    this._it = null;
    this._first = undefined;
    this.columns = [];
    this.findKind = 'FIND_RELATION';
    this.basisTx = 0n;
    this.resumeToken = Buffer.alloc(0);
    this.rowsSoFar = 0n;
    this.resumed = 0;
    this._done = false;
  }

  // QueryFirst's reply (most answers come whole from this one unary call),
  // or null when the Query stream is to run the query from the start: a
  // query too big for QueryFirst, an older server, a connection to retry.
  async _queryFirst() {
    const client = this._client;
    const token = this._request.resume_token;
    if ((token && token.length) || client._noQueryFirst) return null;
    let m;
    try {
      m = await new Promise((resolve, reject) => {
        client._stub.QueryFirst(this._request, client._metadata, client._callOptions(),
          (err, res) => (err ? reject(err) : resolve(res)));
      });
    } catch (e) {
      if (e && e.code === grpc.status.UNIMPLEMENTED) {
        client._noQueryFirst = true;
        return null;
      }
      if (isBroken(e) && this._retries > 0) return null;
      throw fromGrpcError(e);
    }
    if (m.more && !(m.resume_token && m.resume_token.length)) return null;
    this._note(m);
    if (m.more) this._request.resume_token = m.resume_token;
    else this._done = true;
    return m;
  }

  _note(m) {
    if (m.columns && m.columns.length) { this.columns = m.columns; this.findKind = m.find_kind; }
    this.basisTx = big(m.basis_tx);
    if (m.resume_token && m.resume_token.length) this.resumeToken = m.resume_token;
    this.rowsSoFar = big(m.rows_so_far);
  }

  _open() {
    const opts = this._client._callOptions();
    if (this._request.resume_token && this._request.resume_token.length) opts.waitForReady = true;
    this._call = this._client._stub.Query(this._request, this._client._metadata, opts);
    this._it = this._call[Symbol.asyncIterator]();
  }

  async _next() {
    if (this._done) return null;
    for (;;) {
      if (!this._call) this._open();
      let r;
      try {
        r = await this._it.next();
      } catch (e) {
        if (isBroken(e) && this.resumeToken.length && this._retries > 0) {
          this._retries -= 1;
          this.resumed += 1;
          this._request.resume_token = this.resumeToken;
          this._call = null;
          continue;
        }
        throw fromGrpcError(e);
      }
      if (r.done) return null;
      const m = r.value;
      this._note(m);
      return m;
    }
  }

  /** Reads the first message (once); resolves to the stream. */
  async ready() {
    if (this._first === undefined) {
      this._first = await this._queryFirst();
      if (this._first === null) this._first = await this._next();
    }
    return this;
  }

  async* batches() {
    await this.ready();
    let m = this._first;
    this._first = null;
    try {
      while (m) {
        if (m.rows.length) yield m.rows.map((row) => row.values.map(V.fromValue));
        m = await this._next();
      }
    } finally {
      this.cancel();
    }
  }

  async* [Symbol.asyncIterator]() {
    for await (const batch of this.batches()) yield* batch;
  }

  cancel() { if (this._call) this._call.cancel(); }
}

class Client {
  /**
   * target: "host:port" or "unix:/path". options: database ("default"),
   * token (sent as "authorization: Bearer <token>"), tls, rootCerts (PEM
   * Buffer or file path; implies tls), serverName (the name checked in the
   * server's certificate), timeoutMs (every call's deadline), basis.
   */
  constructor(target = '127.0.0.1:7878', options = {}) {
    const { v1 } = proto();
    let creds = grpc.credentials.createInsecure();
    if (options.tls || options.rootCerts) {
      let roots = options.rootCerts;
      if (typeof roots === 'string') roots = fs.readFileSync(roots);
      creds = grpc.credentials.createSsl(roots || null);
    }
    const channelOptions = {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      ...(options.serverName ? { 'grpc.ssl_target_name_override': options.serverName } : {}),
      ...(options.channelOptions || {}),
    };
    this._stub = new v1.Mentat(target, creds, channelOptions);
    this._owner = true;
    // Set when the server does not know QueryFirst (an older mentatd).
    this._noQueryFirst = false;
    this._metadata = new grpc.Metadata();
    if (options.token) this._metadata.set('authorization', `Bearer ${options.token}`);
    this._timeoutMs = options.timeoutMs ?? null;
    this.target = target;
    this.database = options.database ?? 'default';
    this.basis = options.basis ?? latest();
    // Speculative tx-data (EDN text) every read of this view applies first.
    this.withTxData = [];
  }

  // --- views ---------------------------------------------------------------

  _view(changes) {
    const view = Object.create(Client.prototype);
    Object.assign(view, this, { _owner: false }, changes);
    return view;
  }

  withBasis(basis) { return this._view({ basis }); }
  asOf(point) { return this.withBasis(asOf(point)); }
  since(point) { return this.withBasis(since(point)); }
  history() { return this.withBasis(history()); }
  /** The same connection on another database. */
  use(database) { return this._view({ database }); }
  /**
   * The same connection reading the database as if each txData (EDN text
   * or JS data, like transact()'s) were transacted on top of it, in order,
   * without committing anything (Datomic's `with`): queries, pulls, datoms
   * and explain through the view send them as with_tx_data. A view of a
   * view adds to its transactions.
   */
  withTx(...txData) { return this._view({ withTxData: [...this.withTxData, ...txData.map(txEdn)] }); }

  close() { if (this._owner) this._stub.close(); }

  _callOptions() {
    return this._timeoutMs ? { deadline: new Date(Date.now() + this._timeoutMs) } : {};
  }

  _unary(method, request) {
    return new Promise((resolve, reject) => {
      this._stub[method](request, this._metadata, this._callOptions(), (err, res) => {
        if (err) reject(fromGrpcError(err));
        else resolve(res);
      });
    });
  }

  _withInputs(request, inputs) {
    request.inputs = (inputs || []).map(input);
    request.basis = basisProto(this.basis);
    request.with_tx_data = this.withTxData;
    return request;
  }

  // --- writes --------------------------------------------------------------

  /**
   * Commits tx-data (EDN text, or JS data: see tx.js); resolves once it is
   * durable. With requestId, a retry answers with the original result.
   * With dryRun nothing is committed: the result is what the commit would
   * answer (withTx() queries such a value).
   */
  async transact(txData, { requestId = '', returnDatoms = false, dryRun = false } = {}) {
    const tx_data = txEdn(txData);
    return txResult(await this._unary('Transact', {
      database: this.database, tx_data, request_id: requestId, return_datoms: returnDatoms,
      dry_run: dryRun,
    }));
  }

  /** Bulk load: each transaction EDN text or JS data, perMessage a message. */
  import(transactions, { perMessage = 1000 } = {}) {
    const batches = [];
    let batch = [];
    for (const t of transactions) {
      batch.push(txEdn(t));
      if (batch.length >= perMessage) { batches.push(batch); batch = []; }
    }
    if (batch.length || !batches.length) batches.push(batch);
    return new Promise((resolve, reject) => {
      const call = this._stub.Import(this._metadata, this._callOptions(), (err, r) => {
        if (err) reject(fromGrpcError(err));
        else {
          resolve({
            transactions: big(r.transactions), datoms: big(r.datoms), firstTx: big(r.first_tx),
            lastTx: big(r.last_tx), basisTx: big(r.basis_tx), method: r.method,
            elapsedMicros: big(r.elapsed_micros),
          });
        }
      });
      for (const b of batches) call.write({ database: this.database, tx_data: b });
      call.end();
    });
  }

  // --- reads ---------------------------------------------------------------

  /** A QueryStream over the rows; inputs are the :in values after $. */
  query(query, inputs = [], { limit = 0, timeoutMs = 0, batchRows = 0, resumeRetries = 3 } = {}) {
    const req = this._withInputs({
      database: this.database, query, limit: String(limit), timeout_ms: String(timeoutMs), batch_rows: batchRows,
    }, inputs);
    return new QueryStream(this, req, resumeRetries);
  }

  /** query(), collected and shaped by the :find spec. */
  async q(query, inputs = [], options = {}) {
    const stream = await this.query(query, inputs, options).ready();
    const rows = [];
    for await (const row of stream) rows.push(row);
    return shape(stream.findKind, rows);
  }

  async pull(pattern, entity) {
    const r = await this._unary('Pull', {
      database: this.database, pattern, entity: entityRef(entity), basis: basisProto(this.basis),
      with_tx_data: this.withTxData,
    });
    return V.fromValue(r.result);
  }

  async pullMany(pattern, entities) {
    const r = await this._unary('PullMany', {
      database: this.database, pattern, entities: [...entities].map(entityRef), basis: basisProto(this.basis),
      with_tx_data: this.withTxData,
    });
    return r.results.map(V.fromValue);
  }

  /**
   * The datoms of index ("eavt", "aevt", "avet", "vaet") whose leading
   * components match, in index order; resumes like query().
   */
  async* datoms(index, components = [], { limit = 0, batchSize = 0, resumeRetries = 3 } = {}) {
    const ix = INDEXES[String(index).toLowerCase()];
    if (!ix) throw new RangeError(`mentat: unknown index ${index} (eavt, aevt, avet, vaet)`);
    const req = {
      database: this.database, index: ix, components: components.map(component),
      basis: basisProto(this.basis), limit: String(limit), batch_size: batchSize,
      with_tx_data: this.withTxData,
    };
    let token = null;
    let retries = resumeRetries;
    for (;;) {
      const opts = this._callOptions();
      if (token) { req.resume_token = token; opts.waitForReady = true; }
      const call = this._stub.Datoms(req, this._metadata, opts);
      try {
        for await (const m of call) {
          if (m.resume_token && m.resume_token.length) token = m.resume_token;
          for (const d of m.datoms) yield datom(d);
        }
        return;
      } catch (e) {
        if (isBroken(e) && token && retries > 0) { retries -= 1; continue; }
        throw fromGrpcError(e);
      } finally {
        call.cancel();
      }
    }
  }

  async explain(query, inputs = [], { profile = false } = {}) {
    const r = await this._unary('Explain', this._withInputs({ database: this.database, query, profile }, inputs));
    return r.plan;
  }

  async schema() {
    return schemaResult(await this._unary('Schema', { database: this.database }));
  }

  async stats({ valueCounts = false } = {}) {
    return statsResult(await this._unary('Stats', { database: this.database, value_counts: valueCounts }));
  }

  // --- the log -------------------------------------------------------------

  /** The log between two transactions (from inclusive, to exclusive; 0: open). */
  txRange(fromTx = 0n, toTx = 0n) {
    return this._logStream('TxRange', { database: this.database, from_tx: String(fromTx), to_tx: String(toTx) });
  }

  /** Transactions as they commit; `break` out of the loop to stop. */
  subscribe({ fromTx = 0n, omitDatoms = false } = {}) {
    return this._logStream('Subscribe', { database: this.database, from_tx: String(fromTx), omit_datoms: omitDatoms });
  }

  async* _logStream(method, request) {
    const call = this._stub[method](request, this._metadata, this._callOptions());
    try {
      yield* wholeTransactions(call);
    } catch (e) {
      throw fromGrpcError(e);
    } finally {
      call.cancel();
    }
  }

  // --- the server ----------------------------------------------------------

  /** The cheapest call: checks the token; resolves to the server's version. */
  async ping() {
    return (await this._unary('Ping', {})).server_version;
  }

  /**
   * The standard grpc.health.v1 Check (no token needed): resolves when the
   * server answers SERVING, rejects with Unavailable otherwise. Sent as raw
   * bytes, so no health proto is loaded: the request is the empty message,
   * the response's field 1 (a varint) the status, SERVING = 1.
   */
  health() {
    return new Promise((resolve, reject) => {
      this._stub.makeUnaryRequest('/grpc.health.v1.Health/Check', () => Buffer.alloc(0), (b) => b,
        {}, new grpc.Metadata(), this._callOptions(), (err, res) => {
          if (err) { reject(fromGrpcError(err)); return; }
          const serving = res.length >= 2 && res[0] === 0x08 ? res[1] : 0;
          if (serving === 1) resolve();
          else reject(errorFor(grpc.status.UNAVAILABLE, `mentatd at ${this.target} is not serving (health status ${serving})`));
        });
    });
  }

  /** A consistent online backup into `destination` (absolute, new). */
  async backup(destination) {
    const r = await this._unary('Backup', { database: this.database, destination });
    return { basisTx: big(r.basis_tx), files: big(r.files), bytes: big(r.bytes), elapsedMicros: big(r.elapsed_micros) };
  }

  async databases() {
    const r = await this._unary('ListDatabases', {});
    return r.databases.map((d) => d.name);
  }

  async databaseInfos() {
    const r = await this._unary('ListDatabases', {});
    return r.databases.map((d) => ({
      name: d.name, basisTx: big(d.basis_tx), basisTxInstant: instant(d.basis_tx_instant_micros),
      diskSizeBytes: big(d.disk_size_bytes),
    }));
  }

  async createDatabase(name) {
    return big((await this._unary('CreateDatabase', { name })).basis_tx);
  }

  async deleteDatabase(name) {
    await this._unary('DeleteDatabase', { name });
  }
}

module.exports = { Client, QueryStream, latest, asOf, since, history, errorFor, protoDir };
