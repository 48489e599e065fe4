"""The exceptions a call raises: one class per kind of failure.

Every one is a MentatError carrying the gRPC status `code`, the server's
message `details`, and, when the message names a place in the EDN sent
("line 3, column 14: ..."), `line` and `column`. Catch the base class for
any failure, or the kind that matters:

    try:
        c.transact(tx)
    except mentat_client.FailedPrecondition:   # a uniqueness conflict, ...
        ...
    except mentat_client.ParseError as e:      # EDN that does not read
        print(e.line, e.column, e.details)

The proto (proto/mentat/v1/mentat.proto) says which RPC fails with which
code, and why.
"""

import re
from typing import Dict, Optional, Type

import grpc


class MentatError(Exception):
    """A call that failed. `code` is the grpc.StatusCode, `details` the
    server's message; `line`/`column` the position in the EDN it names
    (None when it names none)."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__("%s: %s" % (code.name, details))
        self.code = code
        self.details = details
        self.line: Optional[int] = None
        self.column: Optional[int] = None
        m = _POSITION.search(details or "")
        if m:
            self.line, self.column = int(m.group(1)), int(m.group(2))


# The server's EDN errors begin "line N, column M: " (edn/edn_reader.cc);
# an import's name the transaction first ("transaction 3: line 1, ...").
_POSITION = re.compile(r"\bline (\d+), column (\d+)\b")


class InvalidArgument(MentatError):
    """INVALID_ARGUMENT: a malformed request, EDN that does not read, tx-data
    or a query the schema rejects, a value of the wrong type."""


class ParseError(InvalidArgument):
    """INVALID_ARGUMENT with a position: EDN (tx-data, a query, a pull
    pattern) that does not parse, or a form in it that the schema rejects
    (an unknown attribute, an unresolvable lookup ref), at `line` and
    `column`."""


class NotFound(MentatError):
    """NOT_FOUND: no such database, entity, ident or lookup ref."""


class AlreadyExists(MentatError):
    """ALREADY_EXISTS: a database or backup destination of that name."""


class FailedPrecondition(MentatError):
    """FAILED_PRECONDITION: a uniqueness conflict, a failed :db/cas, a
    request id used with other tx-data, a basis past the retention horizon."""


class Aborted(MentatError):
    """ABORTED: a resumed query produced its rows in another order; start
    over."""


class ResourceExhausted(MentatError):
    """RESOURCE_EXHAUSTED: a full transactor queue (retry with the same
    request id), a query over its memory or scan budget, a message over the
    size limit."""


class Unavailable(MentatError):
    """UNAVAILABLE: no server at the address, a server shutting down, a
    commit that hit an I/O error (not acknowledged)."""


class DeadlineExceeded(MentatError):
    """DEADLINE_EXCEEDED: the call's timeout or the query's time limit."""


class Cancelled(MentatError):
    """CANCELLED: the call was cancelled by the client."""


class PermissionDenied(MentatError):
    """PERMISSION_DENIED: a backup destination outside --backup-dir."""


class Unauthenticated(MentatError):
    """UNAUTHENTICATED: a missing or wrong bearer token."""


class Internal(MentatError):
    """INTERNAL, DATA_LOSS, UNKNOWN and the rest: a server fault (never a
    user error)."""


class OutOfRange(InvalidArgument):
    """OUT_OF_RANGE: a value outside what its type holds."""


class Unimplemented(MentatError):
    """UNIMPLEMENTED: an RPC this server does not have (an older mentatd)."""


_BY_CODE: Dict[grpc.StatusCode, Type[MentatError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.ABORTED: Aborted,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRange,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
}


def error_for(code: grpc.StatusCode, details: Optional[str]) -> MentatError:
    """The exception for a failed call's status."""
    details = details or ""
    cls = _BY_CODE.get(code, Internal)
    if cls is InvalidArgument and _POSITION.search(details):
        cls = ParseError
    return cls(code, details)


def from_rpc_error(e: grpc.RpcError) -> Exception:
    """A MentatError for a grpc.RpcError that carries a status (sync and
    grpc.aio calls alike); any other exception as it is."""
    code = getattr(e, "code", None)
    if code is None:
        return e
    details = e.details()
    return error_for(code(), details)
