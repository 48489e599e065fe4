"""mentat_client.Client: a small Python client for mentatd over gRPC."""

import collections
import dataclasses
import datetime
import typing

import grpc

from . import _stubs
from .values import Keyword, datetime_to_micros, micros_to_datetime, \
    to_python, to_value

pb, pb_grpc = _stubs.load()

# The server accepts messages up to 64 MiB by default; gRPC's client
# default (4 MiB) would refuse a large pull or batch.
_MAX_MESSAGE_BYTES = 64 << 20


class MentatError(Exception):
    """A call that failed: `code` is the grpc.StatusCode, `details` the
    server's message (for EDN errors it names line and column)."""

    def __init__(self, code, details):
        super().__init__("%s: %s" % (code.name, details))
        self.code = code
        self.details = details


def _wrap(e):
    if isinstance(e, grpc.RpcError) and hasattr(e, "code"):
        return MentatError(e.code(), e.details())
    return e


class Edn(str):
    """A query input given as EDN text: Edn('[:user/email "a@b"]')."""


class Json(str):
    """A query input given as JSON text (see the proto's Input mapping)."""


@dataclasses.dataclass(frozen=True)
class Basis:
    """Which database value a read sees: use latest(), as_of(), since(),
    history(). `point` is a tx id, a t, or a datetime; `db_tx` pins the
    database value an earlier response reported (0: the latest)."""
    kind: int = 0
    point: typing.Any = None
    db_tx: int = 0

    def to_proto(self, out):
        out.kind = self.kind
        if isinstance(self.point, datetime.datetime):
            out.instant_micros = datetime_to_micros(self.point)
        elif self.point is not None:
            out.tx = int(self.point)
        out.db_tx = self.db_tx
        return out


def latest(db_tx=0):
    return Basis(pb.Basis.LATEST, None, db_tx)


def as_of(point, db_tx=0):
    return Basis(pb.Basis.AS_OF, point, db_tx)


def since(point, db_tx=0):
    return Basis(pb.Basis.SINCE, point, db_tx)


def history(db_tx=0):
    return Basis(pb.Basis.HISTORY, None, db_tx)


Datom = collections.namedtuple("Datom", "e a v tx added")


def _datom(d):
    return Datom(d.e, d.a, to_python(d.v), d.tx, d.added)


@dataclasses.dataclass
class TxResult:
    """What Transact answered."""
    tx: int
    tx_instant: datetime.datetime
    basis_before: int
    basis_after: int
    tempids: typing.Dict[str, int]
    datom_count: int
    datoms: typing.List[Datom]
    replayed: bool
    tempids_missing: bool
    # return_datoms was asked for, but the datoms would not fit in one
    # message: read them with tx_range(tx, tx + 1).
    datoms_omitted: bool = False


@dataclasses.dataclass
class LogTx:
    """One transaction of the log (tx_range, subscribe): every datom it
    wrote, in order (empty with omit_datoms)."""
    tx: int
    tx_instant: datetime.datetime
    datoms: typing.List[Datom]


def _whole_transactions(messages):
    """The transactions of TxRange or Subscribe messages, whole: the server
    sends a transaction bigger than a message in parts (consecutive entries
    with the same tx, each but the last with `continued`), joined here."""
    partial = None
    for m in messages:
        for t in m.transactions:
            if partial is not None and partial.tx != t.tx:
                yield partial  # a part whose rest never came: as it is
                partial = None
            if partial is None:
                partial = LogTx(t.tx, micros_to_datetime(t.tx_instant_micros),
                                [])
            partial.datoms.extend(_datom(d) for d in t.datoms)
            if not t.continued:
                yield partial
                partial = None
    if partial is not None:
        yield partial


def _entity_ref(x, out):
    """An entity id (int), an ident (Keyword or "ns/name" string), or a
    lookup ref (attribute, value)."""
    if isinstance(x, bool):
        raise TypeError("mentat_client: a bool is not an entity")
    if isinstance(x, int):
        out.id = x
    elif isinstance(x, str):
        out.ident = x[1:] if x.startswith(":") else x
    elif isinstance(x, (tuple, list)) and len(x) == 2:
        attr = x[0]
        out.lookup.attribute = attr[1:] if attr.startswith(":") else attr
        to_value(x[1], out.lookup.value)
    else:
        raise TypeError("mentat_client: an entity is an id, an ident or an "
                        "(attribute, value) lookup ref, not %r" % (x,))
    return out


def _input(x, out):
    if isinstance(x, Edn):
        out.edn = str(x)
    elif isinstance(x, Json):
        out.json = str(x)
    else:
        to_value(x, out.value)
    return out


class QueryStream:
    """The rows of a query as they arrive, one batch (one message) at a
    time. Iterating yields rows (lists of Python values); batches() yields
    lists of rows. `columns`, `find_kind` and `basis_tx` are known as soon
    as the stream exists (the first message is read when it is made).

    A stream that breaks with UNAVAILABLE (a dropped connection, a server
    restart) is resumed from the last message's resume token, up to
    `resume_retries` times: no row is lost or repeated."""

    def __init__(self, client, request, resume_retries):
        self._client = client
        self._request = request
        self._retries = resume_retries
        self._call = None
        self.columns = []
        self.find_kind = pb.FIND_RELATION
        self.basis_tx = 0
        self.resume_token = b""
        self.rows_so_far = 0
        self.resumed = 0
        self._first = self._next_message()

    def _open(self):
        # A resumed call waits for the server to be back (a restart)
        # rather than fail at once; the client's timeout still bounds it.
        self._call = self._client._stub.Query(
            self._request, metadata=self._client._metadata,
            timeout=self._client._timeout,
            wait_for_ready=bool(self._request.resume_token) or None)
        self._it = iter(self._call)

    def _next_message(self):
        while True:
            if self._call is None:
                self._open()
            try:
                m = next(self._it)
            except StopIteration:
                return None
            except grpc.RpcError as e:
                if (e.code() == grpc.StatusCode.UNAVAILABLE and
                        self.resume_token and self._retries > 0):
                    self._retries -= 1
                    self.resumed += 1
                    self._request.resume_token = self.resume_token
                    self._call = None
                    continue
                raise _wrap(e) from None
            if m.columns:
                self.columns = list(m.columns)
                self.find_kind = m.find_kind
            self.basis_tx = m.basis_tx
            if m.resume_token:
                self.resume_token = m.resume_token
            self.rows_so_far = m.rows_so_far
            return m

    def batches(self):
        m, self._first = self._first, None
        while m is not None:
            if m.rows:
                yield [[to_python(v) for v in r.values] for r in m.rows]
            m = self._next_message()

    def __iter__(self):
        for batch in self.batches():
            yield from batch

    def cancel(self):
        if self._call is not None:
            self._call.cancel()


class Client:
    """A connection to mentatd.

        c = Client("127.0.0.1:7878", token="s3cret")
        c.transact('[{:user/email "a@b.c"}]')
        for row in c.query('[:find ?e ?m :where [?e :user/email ?m]]'):
            ...
        c.as_of(1005).pull("[*]", (":user/email", "a@b.c"))

    `target` is host:port or unix:/path. With `tls` (or root_certificates
    given: PEM bytes or a file path) the channel uses TLS; `server_name`
    overrides the name checked in the server's certificate. `token` is sent
    as "authorization: Bearer <token>" on every call. `timeout` (seconds)
    is every call's deadline (None: none). Thread-safe; close() when done
    (or use it as a context manager)."""

    def __init__(self, target="127.0.0.1:7878", database="default", *,
                 token=None, tls=False, root_certificates=None,
                 server_name=None, timeout=None, basis=None, options=()):
        opts = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES)]
        if server_name:
            opts.append(("grpc.ssl_target_name_override", server_name))
        opts.extend(options)
        if tls or root_certificates is not None:
            roots = root_certificates
            if isinstance(roots, str):
                with open(roots, "rb") as f:
                    roots = f.read()
            creds = grpc.ssl_channel_credentials(root_certificates=roots)
            self._channel = grpc.secure_channel(target, creds, opts)
        else:
            self._channel = grpc.insecure_channel(target, opts)
        self._owns_channel = True
        self._stub = pb_grpc.MentatStub(self._channel)
        self._metadata = (("authorization", "Bearer " + token),) if token \
            else ()
        self._timeout = timeout
        self.database = database
        self.basis = basis or latest()

    # --- views -------------------------------------------------------

    def _view(self, **changes):
        view = object.__new__(Client)
        view.__dict__.update(self.__dict__)
        view._owns_channel = False
        view.__dict__.update(changes)
        return view

    def with_basis(self, basis):
        """The same connection reading at `basis` (a Basis)."""
        return self._view(basis=basis)

    def as_of(self, point):
        return self.with_basis(as_of(point))

    def since(self, point):
        return self.with_basis(since(point))

    def history(self):
        return self.with_basis(history())

    def use(self, database):
        """The same connection on another database."""
        return self._view(database=database)

    def close(self):
        if self._owns_channel:
            self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _unary(self, method, request):
        try:
            return method(request, metadata=self._metadata,
                          timeout=self._timeout)
        except grpc.RpcError as e:
            raise _wrap(e) from None

    # --- writes ------------------------------------------------------

    def transact(self, tx_data, *, request_id=None, return_datoms=False):
        """Commits EDN tx-data; returns a TxResult once it is durable.
        With a request_id, a retry returns the original result (replayed)
        instead of transacting twice."""
        req = pb.TransactRequest(database=self.database, tx_data=tx_data,
                                 request_id=request_id or "",
                                 return_datoms=return_datoms)
        r = self._unary(self._stub.Transact, req)
        return TxResult(r.tx, micros_to_datetime(r.tx_instant_micros),
                        r.basis_before, r.basis_after, dict(r.tempids),
                        r.datom_count, [_datom(d) for d in r.datoms],
                        r.replayed, r.tempids_missing, r.datoms_omitted)

    # --- reads -------------------------------------------------------

    def query(self, query, *inputs, limit=0, timeout_ms=0, batch_rows=0,
              resume_retries=3):
        """Runs a Datalog query; returns a QueryStream (iterate it for
        rows). `inputs` are the :in values after $: Python values, Edn(...)
        or Json(...) text."""
        req = pb.QueryRequest(database=self.database, query=query,
                              limit=limit, timeout_ms=timeout_ms,
                              batch_rows=batch_rows)
        for x in inputs:
            _input(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        return QueryStream(self, req, resume_retries)

    def q(self, query, *inputs, **kw):
        """query(), collected and shaped by the :find spec: a list of rows
        (relation), a list of values (collection), one row or None (tuple),
        one value or None (scalar)."""
        stream = self.query(query, *inputs, **kw)
        rows = list(stream)
        if stream.find_kind == pb.FIND_COLLECTION:
            return [r[0] for r in rows]
        if stream.find_kind == pb.FIND_TUPLE:
            return rows[0] if rows else None
        if stream.find_kind == pb.FIND_SCALAR:
            return rows[0][0] if rows else None
        return rows

    def pull(self, pattern, entity):
        """Pulls `pattern` (EDN text) from one entity: a dict keyed by
        Keyword (":user/email" works as a key too)."""
        req = pb.PullRequest(database=self.database, pattern=pattern)
        _entity_ref(entity, req.entity)
        self.basis.to_proto(req.basis)
        return to_python(self._unary(self._stub.Pull, req).result)

    def pull_many(self, pattern, entities):
        """pull() for many entities, in order (None for one that names no
        entity)."""
        req = pb.PullManyRequest(database=self.database, pattern=pattern)
        for e in entities:
            _entity_ref(e, req.entities.add())
        self.basis.to_proto(req.basis)
        r = self._unary(self._stub.PullMany, req)
        return [to_python(v) for v in r.results]

    def explain(self, query, *inputs, profile=False):
        """The query's plan as text (with profile: run, with actual rows
        and times)."""
        req = pb.ExplainRequest(database=self.database, query=query,
                                profile=profile)
        for x in inputs:
            _input(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        return self._unary(self._stub.Explain, req).plan

    # --- the server --------------------------------------------------

    def ping(self):
        """The cheapest call: checks the token and touches no database.
        Returns the server's version ("mentatd 0.1.0")."""
        return self._unary(self._stub.Ping, pb.PingRequest()).server_version

    def tx_range(self, from_tx=0, to_tx=0):
        """The log between two transactions (from_tx inclusive, to_tx
        exclusive; 0: from the start, up to the latest): yields LogTx,
        oldest first, each whole."""
        req = pb.TxRangeRequest(database=self.database, from_tx=from_tx,
                                to_tx=to_tx)
        yield from self._log_stream(self._stub.TxRange, req)

    def subscribe(self, from_tx=0, omit_datoms=False):
        """Transactions as they commit (after catching up from from_tx,
        when given): yields LogTx, each whole, until the server ends the
        stream or the generator is closed."""
        req = pb.SubscribeRequest(database=self.database, from_tx=from_tx,
                                  omit_datoms=omit_datoms)
        yield from self._log_stream(self._stub.Subscribe, req)

    def _log_stream(self, method, request):
        call = method(request, metadata=self._metadata, timeout=self._timeout)
        try:
            yield from _whole_transactions(call)
        except grpc.RpcError as e:
            raise _wrap(e) from None
        finally:
            call.cancel()

    # --- databases ---------------------------------------------------

    def databases(self):
        r = self._unary(self._stub.ListDatabases, pb.ListDatabasesRequest())
        return [d.name for d in r.databases]

    def create_database(self, name):
        return self._unary(self._stub.CreateDatabase,
                           pb.CreateDatabaseRequest(name=name)).basis_tx

    def delete_database(self, name):
        self._unary(self._stub.DeleteDatabase,
                    pb.DeleteDatabaseRequest(name=name))
