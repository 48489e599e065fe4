'use strict';
// @mentat/client: a Node.js client for mentatd (see README.md).
const client = require('./lib/client');
const values = require('./lib/values');
const errors = require('./lib/errors');
const { txEdn } = require('./lib/tx');

module.exports = {
  Client: client.Client,
  QueryStream: client.QueryStream,
  latest: client.latest,
  asOf: client.asOf,
  since: client.since,
  history: client.history,
  Keyword: values.Keyword,
  kw: values.kw,
  Sym: values.Sym,
  Uri: values.Uri,
  Char: values.Char,
  Uuid: values.Uuid,
  BigDec: values.BigDec,
  Double: values.Double,
  Tagged: values.Tagged,
  Edn: values.Edn,
  Json: values.Json,
  LookupRef: values.LookupRef,
  Instant: values.Instant,
  toEdn: values.toEdn,
  txEdn,
  MentatError: errors.MentatError,
  InvalidArgument: errors.InvalidArgument,
  ParseError: errors.ParseError,
  NotFound: errors.NotFound,
  AlreadyExists: errors.AlreadyExists,
  FailedPrecondition: errors.FailedPrecondition,
  Aborted: errors.Aborted,
  ResourceExhausted: errors.ResourceExhausted,
  Unavailable: errors.Unavailable,
  DeadlineExceeded: errors.DeadlineExceeded,
  Cancelled: errors.Cancelled,
  PermissionDenied: errors.PermissionDenied,
  Unauthenticated: errors.Unauthenticated,
  Internal: errors.Internal,
  OutOfRange: errors.OutOfRange,
  Unimplemented: errors.Unimplemented,
};
