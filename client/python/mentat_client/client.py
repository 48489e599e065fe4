"""mentat_client.Client: the blocking Python client for mentatd over gRPC.
(aio.Client is the same on asyncio.)"""

from typing import (Any, Callable, Iterable, Iterator, List, Optional,
                    Sequence, Union)

import grpc

from . import results as R
from .cluster import (Nodes, code_and_details, named_primary,
                      never_connected, split_addresses)
from ._pb import mentat_pb2 as pb
from ._pb import mentat_pb2_grpc as pb_grpc
from .errors import error_for, from_rpc_error
from .results import (Basis, BackupResult, Datom, DatabaseInfo, EntityLike,
                      ImportResult, LogTx, Point, Schema, Stats, TxResult)
from .tx import TxData, tx_edn
from .values import to_python


def _resumable(open_call: Callable[[Any], Any], request: Any,
               retries: int) -> Iterator[Any]:
    """The messages of a Query or Datoms stream. One that breaks with
    UNAVAILABLE is sent again with the last message's resume token, up to
    `retries` times: no row or datom is lost or repeated."""
    token = b""
    while True:
        call = open_call(request)
        try:
            for m in call:
                if m.resume_token:
                    token = m.resume_token
                yield m
            return
        except grpc.RpcError as e:
            if (getattr(e, "code", None) is not None and
                    e.code() == grpc.StatusCode.UNAVAILABLE and token and
                    retries > 0):
                retries -= 1
                request.resume_token = token
                continue
            raise from_rpc_error(e) from None
        finally:
            call.cancel()


class QueryStream(R.QueryProgress):
    """The rows of a query as they arrive, one batch (one message) at a
    time. Iterating yields rows (lists of Python values); batches() yields
    lists of rows. `columns`, `find_kind` and `basis_tx` are known as soon
    as the stream exists (the first message is read when it is made, so a
    query that does not parse raises there).

    A stream that breaks with UNAVAILABLE (a dropped connection, a server
    restart) resumes from the last message's resume token, up to
    `resume_retries` times: no row is lost or repeated."""

    def __init__(self, client: "Client", request: Any,
                 resume_retries: int) -> None:
        self._client = client
        self._request = request
        self._retries = resume_retries
        self._call: Any = None
        self.columns: List[str] = []
        self.find_kind: int = pb.FIND_RELATION
        self.basis_tx = 0
        self.resume_token = b""
        self.rows_so_far = 0
        self.resumed = 0
        # Most answers come whole from one unary QueryFirst call; the Query
        # stream runs only when its reply says there is more.
        self._done = False
        self._first = self._query_first()
        if self._first is None:
            self._first = self._next_message()

    def _query_first(self) -> Any:
        """QueryFirst's reply, or None when the stream is to run the query
        from the start (a query too big for QueryFirst, an older server,
        a connection to retry)."""
        client = self._client
        if self._request.resume_token or client._no_query_first:
            return None
        try:
            m = client._read_call("QueryFirst", self._request)
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            if code == grpc.StatusCode.UNIMPLEMENTED:
                client._no_query_first = True
                return None
            if code == grpc.StatusCode.UNAVAILABLE and self._retries > 0:
                return None
            raise from_rpc_error(e) from None
        return self._take_first(m)

    def _open(self) -> Any:
        # A resumed call waits for the server to be back (a restart)
        # rather than fail at once; the client's timeout still bounds it.
        call = self._client._read_stub().Query(
            self._request, metadata=self._client._metadata,
            timeout=self._client._timeout,
            wait_for_ready=bool(self._request.resume_token) or None)
        self._it = iter(call)
        return call

    def _next_message(self) -> Any:
        if self._done:
            return None
        while True:
            if self._call is None:
                self._call = self._open()
            try:
                m = next(self._it)
            except StopIteration:
                return None
            except grpc.RpcError as e:
                if (getattr(e, "code", None) is not None and
                        e.code() == grpc.StatusCode.UNAVAILABLE and
                        self.resume_token and self._retries > 0):
                    self._retries -= 1
                    self.resumed += 1
                    self._request.resume_token = self.resume_token
                    self._call = None
                    continue
                raise from_rpc_error(e) from None
            self._note(m)
            return m

    def batches(self) -> Iterator[List[List[Any]]]:
        m, self._first = self._first, None
        while m is not None:
            if m.rows:
                yield [[to_python(v) for v in r.values] for r in m.rows]
            m = self._next_message()

    def __iter__(self) -> Iterator[List[Any]]:
        for batch in self.batches():
            yield from batch

    def cancel(self) -> None:
        if self._call is not None:
            self._call.cancel()


class Client(R.BasisViews):
    """A connection to mentatd.

        c = Client("127.0.0.1:7878", token="s3cret")
        c.transact([{":user/email": "a@b.c"}])
        for row in c.query('[:find ?e ?m :where [?e :user/email ?m]]'):
            ...
        c.as_of(1005).pull("[*]", (":user/email", "a@b.c"))

    `target` is host:port or unix:/path, or the nodes of a cluster
    separated by commas ("h1:7878,h2:7878,h3:7878"): reads then go round
    the nodes, passing one that answers UNAVAILABLE, and writes go to the
    primary, found by following the address a replica names when it
    refuses one (cluster.py; `addresses`, `primary`). With `tls` (or
    root_certificates given: PEM bytes or a file path) the channel uses
    TLS; `server_name`
    overrides the name checked in the server's certificate. `token` is sent
    as "authorization: Bearer <token>" on every call. `timeout` (seconds)
    is every call's deadline (None: none). Failures raise MentatError
    subclasses (errors.py). Thread-safe; close() when done (or use it as a
    context manager)."""

    def __init__(self, target: str = "127.0.0.1:7878",
                 database: str = "default", *, token: Optional[str] = None,
                 tls: bool = False,
                 root_certificates: Union[None, bytes, str] = None,
                 server_name: Optional[str] = None,
                 timeout: Optional[float] = None,
                 basis: Optional[Basis] = None,
                 options: Iterable[Any] = ()) -> None:
        opts = R.channel_options(server_name, options)
        if tls or root_certificates is not None:
            creds = grpc.ssl_channel_credentials(
                root_certificates=R.root_certs(root_certificates))
            make_channel = (lambda a: grpc.secure_channel(a, creds, opts))
        else:
            make_channel = (lambda a: grpc.insecure_channel(a, opts))
        self._nodes = Nodes(split_addresses(target), make_channel,
                            pb_grpc.MentatStub)
        _, self._channel, self._stub = self._nodes.first()
        self._owns_channel = True
        # Set when the server does not know QueryFirst (an older mentatd).
        self._no_query_first = False
        self._metadata = R.auth_metadata(token)
        self._timeout = timeout
        self.target = target
        self.database = database
        self.basis = basis or R.latest()

    # --- views: with_basis, as_of, since, history, use, with_tx
    # (R.BasisViews) ---

    @property
    def addresses(self) -> List[str]:
        """The nodes this client knows (a primary a replica named is
        added)."""
        return self._nodes.addresses()

    @property
    def primary(self) -> str:
        """The node writes go to now."""
        return self._nodes.primary()[0]

    def close(self) -> None:
        if self._owns_channel:
            for ch in self._nodes.channels():
                ch.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _unary(self, method: Any, request: Any) -> Any:
        try:
            return method(request, metadata=self._metadata,
                          timeout=self._timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _read_stub(self) -> Any:
        """The stub of the node the next read (a stream) goes to."""
        if len(self._nodes) == 1:
            return self._stub
        return self._nodes.next_read()[1]

    def _read_call(self, name: str, request: Any) -> Any:
        """A unary read, sent to the next node of the round and on to the
        following ones while they answer UNAVAILABLE. Raises grpc.RpcError
        (the last node's)."""
        count = len(self._nodes)
        for i in range(count):
            stub = self._read_stub()
            try:
                return getattr(stub, name)(request, metadata=self._metadata,
                                           timeout=self._timeout)
            except grpc.RpcError as e:
                code, _ = code_and_details(e)
                if code != grpc.StatusCode.UNAVAILABLE or i + 1 == count:
                    raise

    def _read(self, name: str, request: Any) -> Any:
        try:
            return self._read_call(name, request)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _write(self, name: str, request: Any) -> Any:
        """A unary write, sent to the believed primary. A refusal naming
        the primary at another address is followed once; a node that
        could not be reached (nothing was sent) is passed over."""
        if len(self._nodes) == 1:
            return self._unary(getattr(self._stub, name), request)
        address, stub = self._nodes.primary()
        followed = False
        passed = 0
        while True:
            try:
                return getattr(stub, name)(request, metadata=self._metadata,
                                           timeout=self._timeout)
            except grpc.RpcError as e:
                code, details = code_and_details(e)
                named = named_primary(code, details)
                if named and named != address and not followed:
                    followed = True
                    address, stub = named, self._nodes.set_primary(named)
                    continue
                if code == grpc.StatusCode.UNAVAILABLE:
                    self._nodes.primary_failed(address)
                    if (never_connected(code, details) and
                            passed + 1 < len(self._nodes)):
                        passed += 1
                        address, stub = self._nodes.primary()
                        continue
                raise from_rpc_error(e) from None

    # --- writes ------------------------------------------------------

    def transact(self, tx_data: TxData, *, request_id: Optional[str] = None,
                 return_datoms: bool = False,
                 dry_run: bool = False) -> TxResult:
        """Commits tx-data, given as EDN text or as Python data (a list of
        entity maps and op lists, see tx.py); returns a TxResult once it is
        durable. With a request_id, a retry returns the original result
        (replayed) instead of transacting twice. With dry_run, nothing is
        committed: the result is what the commit would answer (with_tx()
        queries such a value)."""
        req = pb.TransactRequest(database=self.database,
                                 tx_data=tx_edn(tx_data),
                                 request_id=request_id or "",
                                 return_datoms=return_datoms,
                                 dry_run=dry_run)
        return R.tx_result(self._write("Transact", req))

    def import_(self, transactions: Iterable[TxData], *,
                per_message: int = 1000) -> ImportResult:
        """Bulk load: streams the transactions (each EDN text or Python
        data, like transact()'s), `per_message` to a message, and returns
        once all are durable. Not retried: a failure names the
        transaction's index; those before it stay imported."""
        def messages() -> Iterator[Any]:
            batch: List[str] = []
            sent = False
            for t in transactions:
                batch.append(tx_edn(t))
                if len(batch) >= per_message:
                    sent = True
                    yield pb.ImportRequest(database=self.database,
                                           tx_data=batch)
                    batch = []
            if batch or not sent:
                yield pb.ImportRequest(database=self.database, tx_data=batch)
        # To the believed primary, not re-sent elsewhere (the messages are
        # consumed): the caller resumes from what stats() says.
        return R.import_result(self._unary(self._nodes.primary()[1].Import,
                                           messages()))

    # --- reads -------------------------------------------------------

    def _query_request(self, query: str, inputs: Sequence[Any], limit: int,
                       timeout_ms: int, batch_rows: int) -> Any:
        req = pb.QueryRequest(database=self.database, query=query,
                              limit=limit, timeout_ms=timeout_ms,
                              batch_rows=batch_rows)
        for x in inputs:
            R.input_value(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return req

    def query(self, query: str, *inputs: Any, limit: int = 0,
              timeout_ms: int = 0, batch_rows: int = 0,
              resume_retries: int = 3) -> QueryStream:
        """Runs a Datalog query; returns a QueryStream (iterate it for
        rows). `inputs` are the :in values after $: Python values, Edn(...)
        or Json(...) text."""
        req = self._query_request(query, inputs, limit, timeout_ms,
                                  batch_rows)
        return QueryStream(self, req, resume_retries)

    def q(self, query: str, *inputs: Any, **kw: Any) -> Any:
        """query(), collected and shaped by the :find spec: a list of rows
        (relation), a list of values (collection), one row or None (tuple),
        one value or None (scalar)."""
        stream = self.query(query, *inputs, **kw)
        return R.shape(stream.find_kind, list(stream))

    def pull(self, pattern: str, entity: EntityLike) -> Any:
        """Pulls `pattern` (EDN text) from one entity: a dict keyed by
        Keyword (":user/email" works as a key too)."""
        req = pb.PullRequest(database=self.database, pattern=pattern)
        R.entity_ref(entity, req.entity)
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return to_python(self._read("Pull", req).result)

    def pull_many(self, pattern: str,
                  entities: Iterable[EntityLike]) -> List[Any]:
        """pull() for many entities, in order (None for one that names no
        entity)."""
        req = pb.PullManyRequest(database=self.database, pattern=pattern)
        for e in entities:
            R.entity_ref(e, req.entities.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        r = self._read("PullMany", req)
        return [to_python(v) for v in r.results]

    def datoms(self, index: Union[str, int], *components: Any,
               limit: int = 0, batch_size: int = 0,
               resume_retries: int = 3) -> Iterator[Datom]:
        """Raw index access: the datoms of `index` ("eavt", "aevt", "avet",
        "vaet") whose leading components match, in index order. Entities
        are ids, Keyword idents or (attribute, value) lookup refs; an
        attribute is a keyword (":user/email"); a value is a Python value.
        Resumes like query()."""
        req = pb.DatomsRequest(database=self.database,
                               index=R.index_of(index), limit=limit,
                               batch_size=batch_size)
        for x in components:
            R.component(x, req.components.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        open_call = (lambda r: self._read_stub().Datoms(
            r, metadata=self._metadata, timeout=self._timeout,
            wait_for_ready=bool(r.resume_token) or None))
        for m in _resumable(open_call, req, resume_retries):
            for d in m.datoms:
                yield R.datom(d)

    def explain(self, query: str, *inputs: Any,
                profile: bool = False) -> str:
        """The query's plan as text (with profile: run, with actual rows
        and times)."""
        req = pb.ExplainRequest(database=self.database, query=query,
                                profile=profile)
        for x in inputs:
            R.input_value(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return self._read("Explain", req).plan

    def schema(self) -> Schema:
        """The installed attributes and idents."""
        return R.schema(self._read(
            "Schema", pb.SchemaRequest(database=self.database)))

    def stats(self, value_counts: bool = False) -> Stats:
        """Datoms and distinct values per attribute, the transactor's
        counters, storage figures."""
        return R.stats(self._read(
            "Stats", pb.StatsRequest(database=self.database,
                                     value_counts=value_counts)))

    # --- the log -----------------------------------------------------

    def tx_range(self, from_tx: int = 0, to_tx: int = 0) -> Iterator[LogTx]:
        """The log between two transactions (from_tx inclusive, to_tx
        exclusive; 0: from the start, up to the latest): yields LogTx,
        oldest first, each whole."""
        req = pb.TxRangeRequest(database=self.database, from_tx=from_tx,
                                to_tx=to_tx)
        yield from self._log_stream("TxRange", req)

    def subscribe(self, from_tx: int = 0,
                  omit_datoms: bool = False) -> Iterator[LogTx]:
        """Transactions as they commit (after catching up from from_tx,
        when given): yields LogTx, each whole, until the server ends the
        stream or the generator is closed."""
        req = pb.SubscribeRequest(database=self.database, from_tx=from_tx,
                                  omit_datoms=omit_datoms)
        yield from self._log_stream("Subscribe", req)

    def _log_stream(self, name: str, request: Any) -> Iterator[LogTx]:
        call = getattr(self._read_stub(), name)(
            request, metadata=self._metadata, timeout=self._timeout)
        try:
            yield from R.whole_transactions(call)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()

    # --- the server --------------------------------------------------

    def ping(self) -> str:
        """The cheapest call: checks the token and touches no database.
        Returns the server's version ("mentatd 0.1.0")."""
        return self._read("Ping", pb.PingRequest()).server_version

    def health(self) -> None:
        """The standard grpc.health.v1 Check (no token needed): returns when
        the server answers SERVING, raises Unavailable otherwise."""
        check = self._channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda _: b"",
            response_deserializer=lambda b: b)
        status = health_status(self._unary(check, None))
        if status != 1:
            raise error_for(grpc.StatusCode.UNAVAILABLE,
                            "mentatd at %s is not serving (health status "
                            "%d)" % (self.target, status))

    def backup(self, destination: str) -> BackupResult:
        """A consistent online backup of this database into `destination`,
        an absolute path on the server's file system that does not exist
        yet (within the server's --backup-dir when it has one)."""
        return R.backup_result(self._write(
            "Backup", pb.BackupRequest(database=self.database,
                                       destination=destination)))

    # --- databases ---------------------------------------------------

    def databases(self) -> List[str]:
        """The databases' names, sorted."""
        r = self._read("ListDatabases", pb.ListDatabasesRequest())
        return [d.name for d in r.databases]

    def database_infos(self) -> List[DatabaseInfo]:
        """The databases with their basis and size, sorted by name."""
        r = self._read("ListDatabases", pb.ListDatabasesRequest())
        return [R.database_info(d) for d in r.databases]

    def create_database(self, name: str) -> int:
        """Creates an empty database; returns its basis tx."""
        return self._write("CreateDatabase",
                           pb.CreateDatabaseRequest(name=name)).basis_tx

    def delete_database(self, name: str) -> None:
        self._write("DeleteDatabase", pb.DeleteDatabaseRequest(name=name))


def health_status(response: bytes) -> int:
    """grpc.health.v1.HealthCheckResponse's status from its bytes (field 1,
    a varint; SERVING = 1), read without the generated health code."""
    if len(response) >= 2 and response[0] == 0x08:
        return response[1]
    return 0

