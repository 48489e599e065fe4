'use strict';
// The errors a call rejects with: one class per kind of failure, each a
// MentatError carrying the gRPC status code (`code`, a number; `codeName`,
// "NOT_FOUND"), the server's message (`details`) and, when the message
// names a place in the EDN sent ("line 3, column 14: ..."), `line` and
// `column`. The classes are the Python client's.

const { status } = require('@grpc/grpc-js');

const POSITION = /\bline (\d+), column (\d+)\b/;
const CODE_NAMES = Object.fromEntries(Object.entries(status).map(([k, v]) => [v, k]));

class MentatError extends Error {
  constructor(code, details) {
    const codeName = CODE_NAMES[code] || `CODE_${code}`;
    super(`${codeName}: ${details}`);
    this.name = this.constructor.name;
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    const m = POSITION.exec(details || '');
    this.line = m ? Number(m[1]) : null;
    this.column = m ? Number(m[2]) : null;
  }
}

/** Malformed request, EDN that does not read, a value of the wrong type. */
class InvalidArgument extends MentatError {}
/**
 * INVALID_ARGUMENT with a position (`line`, `column`): EDN that does not
 * parse, or a form in it the schema rejects.
 */
class ParseError extends InvalidArgument {}
class NotFound extends MentatError {}
class AlreadyExists extends MentatError {}
/** A uniqueness conflict, a failed :db/cas, a request id reused. */
class FailedPrecondition extends MentatError {}
class Aborted extends MentatError {}
class ResourceExhausted extends MentatError {}
class Unavailable extends MentatError {}
class DeadlineExceeded extends MentatError {}
class Cancelled extends MentatError {}
class PermissionDenied extends MentatError {}
class Unauthenticated extends MentatError {}
/** INTERNAL, DATA_LOSS, UNKNOWN: a server fault, never a user error. */
class Internal extends MentatError {}
class OutOfRange extends InvalidArgument {}
class Unimplemented extends MentatError {}

const BY_CODE = {
  [status.INVALID_ARGUMENT]: InvalidArgument,
  [status.NOT_FOUND]: NotFound,
  [status.ALREADY_EXISTS]: AlreadyExists,
  [status.FAILED_PRECONDITION]: FailedPrecondition,
  [status.ABORTED]: Aborted,
  [status.RESOURCE_EXHAUSTED]: ResourceExhausted,
  [status.UNAVAILABLE]: Unavailable,
  [status.DEADLINE_EXCEEDED]: DeadlineExceeded,
  [status.CANCELLED]: Cancelled,
  [status.PERMISSION_DENIED]: PermissionDenied,
  [status.UNAUTHENTICATED]: Unauthenticated,
  [status.OUT_OF_RANGE]: OutOfRange,
  [status.UNIMPLEMENTED]: Unimplemented,
};

/** The error for a status code and message. */
function errorFor(code, details) {
  let Cls = BY_CODE[code] || Internal;
  if (Cls === InvalidArgument && POSITION.test(details || '')) Cls = ParseError;
  return new Cls(code, details || '');
}

/** A grpc-js ServiceError as a MentatError; anything else as it is. */
function fromGrpcError(e) {
  if (e instanceof MentatError) return e;
  if (e && typeof e.code === 'number') return errorFor(e.code, e.details ?? e.message);
  return e;
}

module.exports = {
  MentatError, InvalidArgument, ParseError, NotFound, AlreadyExists, FailedPrecondition,
  Aborted, ResourceExhausted, Unavailable, DeadlineExceeded, Cancelled, PermissionDenied,
  Unauthenticated, Internal, OutOfRange, Unimplemented, errorFor, fromGrpcError,
};
