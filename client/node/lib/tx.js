'use strict';
// tx-data from JS data: what transact() sends when it is given operations
// rather than EDN text.
//
//   [{':db/id': 'ann', ':user/email': 'ann@x.org', ':user/role': [kw(':role/admin')]},
//    [':db/add', 'ann', ':user/name', 'Ann'],
//    [':db/retract', [':user/email', 'bob@x.org'], ':user/age', 41],
//    [':db/retractEntity', 17592186045420n]]
//
// The position decides what a plain string means, as in the Python client:
//  * an op's name, an entity map's keys and an op's attribute are keywords;
//  * an entity (an op's second element, the value of :db/id) is an id
//    (bigint or integral number), a tempid (string), an ident (Keyword) or
//    a lookup ref ([attribute, value] or LookupRef);
//  * a pair whose first element is a namespaced keyword (':person/name',
//    string or Keyword) is a lookup ref wherever it stands, as in EDN;
//  * every other string is a string: enum values need kw().
// An object in a value position is a nested entity map; any other array
// there is the values of a many-valued attribute (two strings, the first
// reading ':ns/name', would be a lookup ref: write them as new Edn(...)).

const { Edn, Keyword, LookupRef, Tagged, toEdn } = require('./values');

const DATOM_OPS = new Set([':db/add', ':db/retract', ':db/cas']);

function fail(where, message) {
  return new TypeError(`mentat: tx-data ${where}: ${message}`);
}

function show(x) {
  if (typeof x === 'bigint') return `${x}n`;
  try {
    return JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(x);
  } catch {
    return String(x);
  }
}

function attribute(a, where) {
  if (a instanceof Keyword) return a.text;
  if (typeof a === 'string') return new Keyword(a).text;
  throw fail(where, `an attribute is a keyword (":ns/name"), not ${show(a)}`);
}

function entity(e, where) {
  if (e instanceof Edn) return e.text;
  if (typeof e === 'bigint' || typeof e === 'string' || e instanceof Keyword || e instanceof LookupRef) {
    return toEdn(e);
  }
  // A number past 2^53 is not an exact id: refused below (use a bigint).
  if (typeof e === 'number' && Number.isSafeInteger(e)) return String(e);
  if (Array.isArray(e) && e.length === 2) return `[${attribute(e[0], where)} ${value(e[1], where)}]`;
  throw fail(where, `an entity is an id, a tempid string, a Keyword ident or an [attribute, value] lookup ref, not ${show(e)}`);
}

function isPlainObject(x) {
  if (x === null || typeof x !== 'object') return false;
  const p = Object.getPrototypeOf(x);
  return p === Object.prototype || p === null;
}

function entityMap(m, where) {
  const parts = [];
  for (const [k, v] of Object.entries(m)) {
    const a = attribute(k, where);
    const w = `${where} ${a}`;
    parts.push(`${a} ${a === ':db/id' ? entity(v, w) : value(v, w)}`);
  }
  return '{' + parts.join(' ') + '}';
}

// A pair whose first element reads as a namespaced keyword (":person/name"):
// a lookup ref, as the same data is in EDN, rather than two strings.
const NAMESPACED = /^:[^\s/[\]{}()"\\,;]+\/[^\s/[\]{}()"\\,;]+$/;
function looksLikeLookup(v) {
  return v.length === 2 && ((typeof v[0] === 'string' && NAMESPACED.test(v[0])) || v[0] instanceof Keyword);
}

function value(v, where) {
  if (isPlainObject(v)) return entityMap(v, where);
  if (Array.isArray(v) && looksLikeLookup(v)) return `[${attribute(v[0], where)} ${value(v[1], where)}]`;
  if (Array.isArray(v)) return '[' + v.map((x) => value(x, where)).join(' ') + ']';
  try {
    return toEdn(v);
  } catch (e) {
    e.message += ` (tx-data ${where})`;
    throw e;
  }
}

function op(o, where) {
  if (o instanceof Edn) return o.text;
  if (isPlainObject(o)) return entityMap(o, where);
  if (Array.isArray(o) && o.length > 0 && (typeof o[0] === 'string' || o[0] instanceof Keyword)) {
    const name = attribute(o[0], where);
    const w = `${where} ${name}`;
    const args = o.slice(1);
    const parts = [name];
    if (DATOM_OPS.has(name) || name === ':db/retractEntity') {
      if (args.length === 0) throw fail(w, 'needs an entity');
      parts.push(entity(args[0], w));
      if (DATOM_OPS.has(name) && args.length > 1) {
        parts.push(attribute(args[1], w));
        for (const x of args.slice(2)) parts.push(value(x, w));
      } else {
        for (const x of args.slice(1)) parts.push(value(x, w));
      }
    } else {
      for (const x of args) parts.push(value(x, w)); // a transaction function
    }
    return '[' + parts.join(' ') + ']';
  }
  throw fail(where, `an operation is an entity map (object) or an array starting with its name (":db/add"), not ${show(o)}`);
}

/**
 * The EDN text of tx-data: a string (EDN text) as it is, else an array (or
 * any iterable) of operations, converted. Throws TypeError / RangeError
 * naming the operation at fault.
 */
function txEdn(txData) {
  if (typeof txData === 'string') return txData;
  if (txData instanceof Edn) return txData.text;
  if (txData == null || typeof txData[Symbol.iterator] !== 'function' || txData instanceof Tagged) {
    throw new TypeError(`mentat: tx-data is EDN text or an array of operations (entity maps, op arrays), not ${show(txData)}`);
  }
  return '[' + [...txData].map((o, i) => op(o, `operation ${i}`)).join(' ') + ']';
}

module.exports = { txEdn };
