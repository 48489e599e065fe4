'use strict';
// Typed values: mentat.v1.Value <-> JavaScript, and JavaScript -> EDN text.
//
// Results (Value -> JS):
//   nil -> null                 long_value, ref, bigint -> bigint (exact)
//   double_value -> number      string_value -> string
//   keyword -> Keyword          boolean -> boolean
//   instant_micros -> Instant (a Date that keeps its microseconds)
//   uuid -> Uuid                bigdec -> BigDec      bytes_value -> Buffer
//   symbol -> Sym               char_value -> Char    list -> Array
//   set -> Set                  tagged -> Tagged      uri -> Uri
//   map -> a plain object when every key is a keyword or a string (keyword
//          keys as ":ns/name", so pull results read r[':user/email']),
//          a Map otherwise.
//
// Inputs (JS -> Value, and JS -> EDN for tx-data) go the other way; an
// integral number is a long (a Double wraps a number that must stay a
// double; a number past 2^53 is a double, a long that large is a bigint),
// a bigint past 64 bits a bigint, a Date an instant.

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
// What an EDN keyword or symbol may hold (the reader's token characters).
const NAME = /^[A-Za-z0-9*+!\-_?<>=.$%&/:#'|]+$/;

function checkName(body, what) {
  if (!body || !NAME.test(body) || body.endsWith('/')) {
    throw new RangeError(`mentat: ${JSON.stringify(body)} is not an EDN ${what}`);
  }
}

/** An EDN keyword; toString() gives ":ns/name". */
class Keyword {
  constructor(text) {
    const body = String(text).startsWith(':') ? String(text).slice(1) : String(text);
    checkName(body, 'keyword');
    this.text = ':' + body;
    Object.freeze(this);
  }
  get namespace() {
    const i = this.text.lastIndexOf('/');
    return i > 0 ? this.text.slice(1, i) : null;
  }
  get name() {
    return this.text.slice(this.text.lastIndexOf('/') + 1).replace(/^:/, '');
  }
  toString() { return this.text; }
  toJSON() { return this.text; }
  equals(other) { return other instanceof Keyword && other.text === this.text; }
  [Symbol.for('nodejs.util.inspect.custom')]() { return `Keyword(${this.text})`; }
}

/** kw(':user/email') or kw('user/email'): a Keyword. */
function kw(text) { return new Keyword(text); }

/** An EDN symbol ("foo", "ns/foo"). */
class Sym {
  constructor(text) { checkName(String(text), 'symbol'); this.text = String(text); }
  toString() { return this.text; }
}

/**
 * A :db.type/uri value: the URI reference as written (EDN #uri "..."); the
 * server checks its RFC 3986 syntax. toString() gives the text, so
 * new URL(String(u)) works for an absolute one.
 */
class Uri {
  constructor(text) { this.text = String(text); Object.freeze(this); }
  toString() { return this.text; }
  toJSON() { return this.text; }
  equals(other) { return other instanceof Uri && other.text === this.text; }
}

/** An EDN character. */
class Char {
  constructor(c) {
    if ([...String(c)].length !== 1) throw new RangeError('mentat: a Char is one character');
    this.char = String(c);
  }
  toString() { return this.char; }
}

/** A UUID, kept as its canonical lower-case text. */
class Uuid {
  constructor(text) {
    const t = String(text).toLowerCase();
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t)) {
      throw new RangeError(`mentat: ${JSON.stringify(text)} is not a UUID`);
    }
    this.text = t;
    Object.freeze(this);
  }
  static fromBytes(buf) {
    const h = Buffer.from(buf).toString('hex');
    return new Uuid(`${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
  }
  toBytes() { return Buffer.from(this.text.replace(/-/g, ''), 'hex'); }
  toString() { return this.text; }
  toJSON() { return this.text; }
  equals(other) { return other instanceof Uuid && other.text === this.text; }
}

/** An arbitrary-precision decimal (EDN 1.50M), kept as its text. */
class BigDec {
  constructor(text) {
    const t = String(text);
    if (!/^-?\d+(\.\d+)?$/.test(t)) throw new RangeError(`mentat: ${JSON.stringify(t)} is not a decimal`);
    this.text = t;
  }
  toString() { return this.text; }
  toJSON() { return this.text; }
}

/** A number that stays a double (3 would be sent as the long 3). */
class Double {
  constructor(n) { this.value = Number(n); }
  valueOf() { return this.value; }
}

/** An EDN tagged literal the server has no type for: #tag value. */
class Tagged {
  constructor(tag, value) { checkName(tag, 'tag'); this.tag = tag; this.value = value; }
}

/** EDN text taken as it is (a query input, or a piece of tx-data). */
class Edn {
  constructor(text) { this.text = String(text); }
  toString() { return this.text; }
}

/** A query input given as JSON text (see the proto's Input mapping). */
class Json {
  constructor(text) { this.text = typeof text === 'string' ? text : JSON.stringify(text); }
  toString() { return this.text; }
}

/** [:attribute value]: the entity whose unique attribute holds value. */
class LookupRef {
  constructor(attribute, value) { this.attribute = new Keyword(attribute); this.value = value; }
}

const EPOCH_MICROS_PER_MS = 1000n;

/** A Date that keeps the microseconds mentatd stores (`micros`, bigint). */
class Instant extends Date {
  constructor(micros) {
    const m = BigInt(micros);
    // Floor division: -1 µs is 1969-12-31T23:59:59.999999, ms -1.
    let ms = m / EPOCH_MICROS_PER_MS;
    if (m % EPOCH_MICROS_PER_MS < 0n) ms -= 1n;
    super(Number(ms));
    this.micros = m;
  }
  toISOString() {
    const base = super.toISOString(); // ...ss.mmmZ
    const frac = ((this.micros % 1000000n) + 1000000n) % 1000000n;
    return base.slice(0, base.length - 4) + frac.toString().padStart(6, '0') + 'Z';
  }
  static fromDate(d) { return new Instant(BigInt(d.getTime()) * 1000n); }
}

function dateMicros(d) {
  if (d instanceof Instant) return d.micros;
  const t = d.getTime();
  if (Number.isNaN(t)) throw new RangeError('mentat: an invalid Date');
  return BigInt(t) * 1000n;
}

function mapKey(k) {
  if (k instanceof Keyword) return k.text;
  if (typeof k === 'string') return k;
  return undefined;
}

/** A mentat.v1.Value (as proto-loader decodes it) as a JS value. */
function fromValue(v) {
  if (v == null) return null;
  switch (v.kind) {
    case undefined:
    case null:
    case 'nil': return null;
    case 'long_value': return BigInt(v.long_value);
    case 'ref': return BigInt(v.ref);
    case 'double_value': return v.double_value;
    case 'string_value': return v.string_value;
    case 'keyword': return new Keyword(v.keyword);
    case 'boolean': return v.boolean;
    case 'instant_micros': return new Instant(v.instant_micros);
    case 'uuid': return Uuid.fromBytes(v.uuid);
    case 'bigint': return BigInt(v.bigint);
    case 'bigdec': return new BigDec(v.bigdec);
    case 'bytes_value': return Buffer.from(v.bytes_value);
    case 'symbol': return new Sym(v.symbol);
    case 'uri': return new Uri(v.uri);
    case 'char_value': return new Char(String.fromCodePoint(v.char_value));
    case 'list': return (v.list.values || []).map(fromValue);
    case 'set': return new Set((v.set.values || []).map(fromValue));
    case 'map': {
      const entries = (v.map.entries || []).map((e) => [fromValue(e.key), fromValue(e.value)]);
      if (entries.every(([k]) => mapKey(k) !== undefined)) {
        const o = {};
        for (const [k, val] of entries) o[mapKey(k)] = val;
        return o;
      }
      return new Map(entries);
    }
    case 'tagged': return new Tagged(v.tagged.tag, fromValue(v.tagged.value));
    default: throw new TypeError(`mentat: unknown Value kind ${v.kind}`);
  }
}

function isPlainObject(x) {
  if (x === null || typeof x !== 'object') return false;
  const p = Object.getPrototypeOf(x);
  return p === Object.prototype || p === null;
}

function describe(x) {
  if (x === null || x === undefined) return String(x);
  return `${typeof x === 'object' ? x.constructor?.name || 'object' : typeof x} ${String(x).slice(0, 40)}`;
}

/** A JS value as a mentat.v1.Value object for proto-loader. */
function toValue(x) {
  if (x === null || x === undefined) return { nil: true };
  if (typeof x === 'boolean') return { boolean: x };
  if (typeof x === 'bigint') {
    return x >= INT64_MIN && x <= INT64_MAX ? { long_value: x.toString() } : { bigint: x.toString() };
  }
  if (typeof x === 'number') {
    // An integral number is a long while it is exact (up to 2^53); past
    // that it is a double (1e300): a long that big must come as a bigint.
    if (Number.isSafeInteger(x)) return { long_value: String(x) };
    return { double_value: x };
  }
  if (x instanceof Double) return { double_value: x.value };
  if (typeof x === 'string') return { string_value: x };
  if (x instanceof Keyword) return { keyword: x.text.slice(1) };
  if (x instanceof Sym) return { symbol: x.text };
  if (x instanceof Uri) return { uri: x.text };
  if (typeof URL !== 'undefined' && x instanceof URL) return { uri: x.href };
  if (x instanceof Char) return { char_value: x.char.codePointAt(0) };
  if (x instanceof Date) return { instant_micros: dateMicros(x).toString() };
  if (x instanceof Uuid) return { uuid: x.toBytes() };
  if (x instanceof BigDec) return { bigdec: x.text };
  if (Buffer.isBuffer(x) || x instanceof Uint8Array) return { bytes_value: Buffer.from(x) };
  if (x instanceof Tagged) return { tagged: { tag: x.tag, value: toValue(x.value) } };
  if (x instanceof LookupRef) return { list: { values: [toValue(x.attribute), toValue(x.value)] } };
  if (Array.isArray(x)) return { list: { values: x.map(toValue) } };
  if (x instanceof Set) return { set: { values: [...x].map(toValue) } };
  if (x instanceof Map) {
    return { map: { entries: [...x].map(([k, v]) => ({ key: toValue(k), value: toValue(v) })) } };
  }
  if (isPlainObject(x)) {
    return {
      map: {
        entries: Object.entries(x).map(([k, v]) => ({
          key: toValue(k.startsWith(':') ? new Keyword(k) : k), value: toValue(v),
        })),
      },
    };
  }
  throw new TypeError(`mentat: no EDN value for ${describe(x)}`);
}

// --- JS -> EDN text ---------------------------------------------------------

const ESCAPES = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f' };
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CHAR_NAMES = { '\n': 'newline', ' ': 'space', '\t': 'tab', '\r': 'return', '\b': 'backspace', '\f': 'formfeed' };

function ednString(s) {
  const bad = LONE_SURROGATE.exec(s);
  if (bad) throw new RangeError(`mentat: string ${JSON.stringify(s.slice(0, 40))} holds a lone surrogate at ${bad.index} (not valid Unicode)`);
  return '"' + s.replace(NEEDS_ESCAPE, (c) => ESCAPES[c] || '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

function ednInstant(d) {
  const micros = dateMicros(d);
  return `#inst "${new Instant(micros).toISOString()}"`;
}

function ednDouble(x) {
  if (Number.isNaN(x)) return '##NaN';
  if (x === Infinity) return '##Inf';
  if (x === -Infinity) return '##-Inf';
  const t = String(x);
  return /[.e]/.test(t) ? t : t + '.0';
}

/**
 * x as EDN text: null -> nil, boolean, number (a long when integral and
 * exact, up to 2^53; a double otherwise), bigint (N past 64 bits),
 * Double, string (escaped), Keyword, Sym, Uri and URL -> #uri, Char,
 * Date -> #inst, Uuid, BigDec
 * -> M, Buffer -> #bytes "<base64>", Array -> vector, Set -> #{}, Map and
 * plain objects -> maps (object keys starting with ':' are keywords),
 * Tagged, LookupRef, Edn (verbatim).
 */
function toEdn(x) {
  if (x === null || x === undefined) return 'nil';
  if (typeof x === 'boolean') return x ? 'true' : 'false';
  if (typeof x === 'bigint') return x >= INT64_MIN && x <= INT64_MAX ? x.toString() : x.toString() + 'N';
  if (typeof x === 'number') {
    return Number.isSafeInteger(x) ? String(x) : ednDouble(x);
  }
  if (x instanceof Double) return ednDouble(x.value);
  if (typeof x === 'string') return ednString(x);
  if (x instanceof Edn) return x.text;
  if (x instanceof Keyword) return x.text;
  if (x instanceof Sym) return x.text;
  if (x instanceof Uri) return `#uri ${ednString(x.text)}`;
  if (typeof URL !== 'undefined' && x instanceof URL) return `#uri ${ednString(x.href)}`;
  if (x instanceof Char) {
    const c = x.char;
    if (CHAR_NAMES[c]) return '\\' + CHAR_NAMES[c];
    const code = c.codePointAt(0);
    if (code < 0x20 || code === 0x7f) return '\\u' + code.toString(16).padStart(4, '0');
    return '\\' + c;
  }
  if (x instanceof Date) return ednInstant(x);
  if (x instanceof Uuid) return `#uuid "${x.text}"`;
  if (x instanceof BigDec) return x.text + 'M';
  if (Buffer.isBuffer(x) || x instanceof Uint8Array) return `#bytes "${Buffer.from(x).toString('base64')}"`;
  if (x instanceof LookupRef) return `[${x.attribute.text} ${toEdn(x.value)}]`;
  if (x instanceof Tagged) return `#${x.tag} ${toEdn(x.value)}`;
  if (x instanceof Json) throw new TypeError('mentat: JSON text has no place in EDN');
  if (Array.isArray(x)) return '[' + x.map(toEdn).join(' ') + ']';
  if (x instanceof Set) return '#{' + [...x].map(toEdn).join(' ') + '}';
  if (x instanceof Map) return '{' + [...x].map(([k, v]) => `${toEdn(k)} ${toEdn(v)}`).join(' ') + '}';
  if (isPlainObject(x)) {
    return '{' + Object.entries(x).map(([k, v]) => `${toEdn(k.startsWith(':') ? new Keyword(k) : k)} ${toEdn(v)}`).join(' ') + '}';
  }
  throw new TypeError(`mentat: no EDN form for ${describe(x)}`);
}

module.exports = {
  Keyword, kw, Sym, Uri, Char, Uuid, BigDec, Double, Tagged, Edn, Json, LookupRef, Instant,
  fromValue, toValue, toEdn, ednString, dateMicros, INT64_MIN, INT64_MAX,
};
