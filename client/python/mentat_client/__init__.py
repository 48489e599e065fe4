"""A small Python client for mentatd (see client/python/README.md).

    from mentat_client import Client
    with Client("127.0.0.1:7878") as c:
        c.transact('[{:db/ident :user/email :db/valueType :db.type/string '
                   ':db/cardinality :db.cardinality/one}]')
"""

from .client import (Basis, Client, Datom, Edn, Json, LogTx, MentatError,
                     QueryStream, TxResult, as_of, history, latest, since)
from .values import Char, Keyword, Symbol, Tagged

__all__ = ["Basis", "Char", "Client", "Datom", "Edn", "Json", "Keyword",
           "LogTx", "MentatError", "QueryStream", "Symbol", "Tagged", "TxResult",
           "as_of", "history", "latest", "since"]
