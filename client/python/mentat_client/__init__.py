"""A Python client for mentatd (see client/python/README.md).

    from mentat_client import Client, kw
    with Client("127.0.0.1:7878") as c:
        c.transact([{":db/ident": kw(":user/email"),
                     ":db/valueType": kw(":db.type/string"),
                     ":db/cardinality": kw(":db.cardinality/one")}])

mentat_client.aio.Client is the same API on asyncio (grpc.aio).
"""

from .client import Client, QueryStream
from .errors import (Aborted, AlreadyExists, Cancelled, DeadlineExceeded,
                     FailedPrecondition, Internal, InvalidArgument,
                     MentatError, NotFound, OutOfRange, ParseError,
                     PermissionDenied, ResourceExhausted, Unauthenticated,
                     Unavailable, Unimplemented)
from .results import (Attribute, AttributeStats, BackupResult, Basis,
                      DatabaseInfo, Datom, ImportResult, LogTx, Schema,
                      Stats, TxResult, as_of, history, latest, since)
from .tx import tx_edn
from .values import (Char, Edn, Json, Keyword, LookupRef, Symbol, Tagged,
                     Uri, kw, to_edn)

__version__ = "0.1.0"

__all__ = [
    "Aborted", "AlreadyExists", "Attribute", "AttributeStats",
    "BackupResult", "Basis", "Cancelled", "Char", "Client", "DatabaseInfo",
    "Datom", "DeadlineExceeded", "Edn", "FailedPrecondition", "ImportResult",
    "Internal", "InvalidArgument", "Json", "Keyword", "LogTx", "LookupRef",
    "MentatError", "NotFound", "OutOfRange", "ParseError",
    "PermissionDenied", "QueryStream", "ResourceExhausted", "Schema",
    "Stats", "Symbol", "Tagged", "TxResult", "Unauthenticated",
    "Unavailable", "Unimplemented", "Uri", "as_of", "history", "kw", "latest",
    "since", "to_edn", "tx_edn"]
