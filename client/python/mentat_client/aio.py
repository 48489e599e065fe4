"""mentat_client.aio.Client: the client on asyncio (grpc.aio), with the
blocking Client's methods as coroutines and its streams as async
iterators.

    from mentat_client import aio, kw

    async def main():
        async with aio.Client("127.0.0.1:7878") as c:
            r = await c.transact([{":user/email": "a@x.org"}])
            async for row in c.query("[:find ?e ?m :where [?e :user/email ?m]]"):
                ...
            stream = await c.query("[:find ?m :where [_ :user/email ?m]]")
            stream.columns                      # read with the first message
            await c.q("[:find ?e . :in $ ?m :where [?e :user/email ?m]]",
                      "a@x.org")
            async for t in c.subscribe():       # transactions as they commit
                ...

Results, values and exceptions are those of the blocking client. A Client
belongs to the event loop it was made on (grpc.aio's rule).
"""

from typing import (Any, AsyncIterator, Callable, Generator, Iterable,
                    List, Optional, Union)

import grpc
import grpc.aio

from . import results as R
from .cluster import (Nodes, code_and_details, named_primary,
                      never_connected, split_addresses)
from ._pb import mentat_pb2 as pb
from ._pb import mentat_pb2_grpc as pb_grpc
from .client import health_status
from .errors import error_for, from_rpc_error
from .results import (Basis, BackupResult, Datom, DatabaseInfo, EntityLike,
                      ImportResult, LogTx, Point, Schema, Stats, TxResult)
from .tx import TxData, tx_edn
from .values import to_python


def _broken(e: grpc.RpcError) -> bool:
    return (getattr(e, "code", None) is not None and
            e.code() == grpc.StatusCode.UNAVAILABLE)


async def _resumable(open_call: Callable[[Any], Any], request: Any,
                     retries: int) -> AsyncIterator[Any]:
    """As client._resumable: the messages of a Query or Datoms stream,
    resumed from the last resume token after UNAVAILABLE."""
    token = b""
    while True:
        call = open_call(request)
        try:
            async for m in call:
                if m.resume_token:
                    token = m.resume_token
                yield m
            return
        except grpc.RpcError as e:
            if _broken(e) and token and retries > 0:
                retries -= 1
                request.resume_token = token
                continue
            raise from_rpc_error(e) from None
        finally:
            call.cancel()


class QueryStream(R.QueryProgress):
    """A query's rows as they arrive. `async for row in stream` yields rows;
    `batches()` yields one list of rows per message. Awaiting the stream
    (`s = await c.query(...)`) reads the first message, after which
    `columns`, `find_kind` and `basis_tx` are set (and a query that does not
    parse has raised); iterating without awaiting works too. Resumes like
    the blocking QueryStream."""

    def __init__(self, client: "Client", request: Any,
                 resume_retries: int) -> None:
        self._client = client
        self._request = request
        self._retries = resume_retries
        self._call: Any = None
        self._started = False
        self._first: Any = None
        self.columns: List[str] = []
        self.find_kind: int = pb.FIND_RELATION
        self.basis_tx = 0
        self.resume_token = b""
        self.rows_so_far = 0
        self.resumed = 0
        self._done = False

    def _open(self) -> Any:
        return self._client._read_stub().Query(
            self._request, metadata=self._client._metadata,
            timeout=self._client._timeout,
            wait_for_ready=bool(self._request.resume_token) or None)

    async def _query_first(self) -> Any:
        """As the blocking QueryStream's: QueryFirst's reply, or None when
        the stream is to run the query from the start."""
        client = self._client
        if self._request.resume_token or client._no_query_first:
            return None
        try:
            m = await client._read_call("QueryFirst", self._request)
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            if code == grpc.StatusCode.UNIMPLEMENTED:
                client._no_query_first = True
                return None
            if _broken(e) and self._retries > 0:
                return None
            raise from_rpc_error(e) from None
        return self._take_first(m)

    async def _next_message(self) -> Any:
        if self._done:
            return None
        while True:
            if self._call is None:
                self._call = self._open()
            try:
                m = await self._call.read()
            except grpc.RpcError as e:
                if _broken(e) and self.resume_token and self._retries > 0:
                    self._retries -= 1
                    self.resumed += 1
                    self._request.resume_token = self.resume_token
                    self._call = None
                    continue
                raise from_rpc_error(e) from None
            if m is grpc.aio.EOF:
                return None
            self._note(m)
            return m

    async def start(self) -> "QueryStream":
        """Reads the first message (once); returns the stream."""
        if not self._started:
            self._started = True
            # Most answers come whole from one unary QueryFirst call.
            self._first = await self._query_first()
            if self._first is None:
                self._first = await self._next_message()
        return self

    def __await__(self) -> Generator[Any, None, "QueryStream"]:
        return self.start().__await__()

    async def batches(self) -> AsyncIterator[List[List[Any]]]:
        await self.start()
        m, self._first = self._first, None
        try:
            while m is not None:
                if m.rows:
                    yield [[to_python(v) for v in r.values] for r in m.rows]
                m = await self._next_message()
        finally:
            self.cancel()

    async def _rows(self) -> AsyncIterator[List[Any]]:
        async for batch in self.batches():
            for row in batch:
                yield row

    def __aiter__(self) -> AsyncIterator[List[Any]]:
        return self._rows()

    def cancel(self) -> None:
        if self._call is not None:
            self._call.cancel()


class Client(R.BasisViews):
    """A connection to mentatd on asyncio; the arguments are the blocking
    Client's (a `target` with commas is a cluster's nodes, routed as the
    blocking Client routes them). Use `async with`, or `await close()`
    when done."""

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
            make_channel = (lambda a: grpc.aio.secure_channel(a, creds, opts))
        else:
            make_channel = (lambda a: grpc.aio.insecure_channel(a, opts))
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
        return self._nodes.addresses()

    @property
    def primary(self) -> str:
        return self._nodes.primary()[0]

    async def close(self) -> None:
        if self._owns_channel:
            for ch in self._nodes.channels():
                await ch.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _unary(self, method: Any, request: Any) -> Any:
        try:
            return await method(request, metadata=self._metadata,
                                timeout=self._timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    # Routing over several nodes: as the blocking Client's (cluster.py).

    def _read_stub(self) -> Any:
        if len(self._nodes) == 1:
            return self._stub
        return self._nodes.next_read()[1]

    async def _read_call(self, name: str, request: Any) -> Any:
        count = len(self._nodes)
        for i in range(count):
            stub = self._read_stub()
            try:
                return await getattr(stub, name)(
                    request, metadata=self._metadata, timeout=self._timeout)
            except grpc.RpcError as e:
                code, _ = code_and_details(e)
                if code != grpc.StatusCode.UNAVAILABLE or i + 1 == count:
                    raise

    async def _read(self, name: str, request: Any) -> Any:
        try:
            return await self._read_call(name, request)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def _write(self, name: str, request: Any) -> Any:
        if len(self._nodes) == 1:
            return await self._unary(getattr(self._stub, name), request)
        address, stub = self._nodes.primary()
        followed = False
        passed = 0
        while True:
            try:
                return await getattr(stub, name)(
                    request, metadata=self._metadata, timeout=self._timeout)
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

    async def transact(self, tx_data: TxData, *,
                       request_id: Optional[str] = None,
                       return_datoms: bool = False,
                       dry_run: bool = False) -> TxResult:
        req = pb.TransactRequest(database=self.database,
                                 tx_data=tx_edn(tx_data),
                                 request_id=request_id or "",
                                 return_datoms=return_datoms,
                                 dry_run=dry_run)
        return R.tx_result(await self._write("Transact", req))

    async def import_(self, transactions: Iterable[TxData], *,
                      per_message: int = 1000) -> ImportResult:
        messages: List[Any] = []
        batch: List[str] = []
        for t in transactions:
            batch.append(tx_edn(t))
            if len(batch) >= per_message:
                messages.append(pb.ImportRequest(database=self.database,
                                                 tx_data=batch))
                batch = []
        if batch or not messages:
            messages.append(pb.ImportRequest(database=self.database,
                                             tx_data=batch))
        return R.import_result(await self._unary(
            self._nodes.primary()[1].Import, iter(messages)))

    # --- reads -------------------------------------------------------

    def query(self, query: str, *inputs: Any, limit: int = 0,
              timeout_ms: int = 0, batch_rows: int = 0,
              resume_retries: int = 3) -> QueryStream:
        """A QueryStream: `async for row in c.query(...)`, or await it
        first for its columns."""
        req = pb.QueryRequest(database=self.database, query=query,
                              limit=limit, timeout_ms=timeout_ms,
                              batch_rows=batch_rows)
        for x in inputs:
            R.input_value(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return QueryStream(self, req, resume_retries)

    async def q(self, query: str, *inputs: Any, **kw: Any) -> Any:
        stream = await self.query(query, *inputs, **kw)
        rows = [row async for row in stream]
        return R.shape(stream.find_kind, rows)

    async def pull(self, pattern: str, entity: EntityLike) -> Any:
        req = pb.PullRequest(database=self.database, pattern=pattern)
        R.entity_ref(entity, req.entity)
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return to_python((await self._read("Pull", req)).result)

    async def pull_many(self, pattern: str,
                        entities: Iterable[EntityLike]) -> List[Any]:
        req = pb.PullManyRequest(database=self.database, pattern=pattern)
        for e in entities:
            R.entity_ref(e, req.entities.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        r = await self._read("PullMany", req)
        return [to_python(v) for v in r.results]

    async def datoms(self, index: Union[str, int], *components: Any,
                     limit: int = 0, batch_size: int = 0,
                     resume_retries: int = 3) -> AsyncIterator[Datom]:
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
        async for m in _resumable(open_call, req, resume_retries):
            for d in m.datoms:
                yield R.datom(d)

    async def explain(self, query: str, *inputs: Any,
                      profile: bool = False) -> str:
        req = pb.ExplainRequest(database=self.database, query=query,
                                profile=profile)
        for x in inputs:
            R.input_value(x, req.inputs.add())
        self.basis.to_proto(req.basis)
        req.with_tx_data.extend(self.with_tx_data)
        return (await self._read("Explain", req)).plan

    async def schema(self) -> Schema:
        return R.schema(await self._read(
            "Schema", pb.SchemaRequest(database=self.database)))

    async def stats(self, value_counts: bool = False) -> Stats:
        return R.stats(await self._read(
            "Stats", pb.StatsRequest(database=self.database,
                                     value_counts=value_counts)))

    # --- the log -----------------------------------------------------

    def tx_range(self, from_tx: int = 0,
                 to_tx: int = 0) -> AsyncIterator[LogTx]:
        req = pb.TxRangeRequest(database=self.database, from_tx=from_tx,
                                to_tx=to_tx)
        return self._log_stream("TxRange", req)

    def subscribe(self, from_tx: int = 0,
                  omit_datoms: bool = False) -> AsyncIterator[LogTx]:
        """Transactions as they commit; stop with `break` (the call is
        cancelled) or by cancelling the task."""
        req = pb.SubscribeRequest(database=self.database, from_tx=from_tx,
                                  omit_datoms=omit_datoms)
        return self._log_stream("Subscribe", req)

    async def _log_stream(self, name: str,
                          request: Any) -> AsyncIterator[LogTx]:
        call = getattr(self._read_stub(), name)(
            request, metadata=self._metadata, timeout=self._timeout)
        joiner = R.TxJoiner()
        try:
            async for m in call:
                for t in joiner.feed(m):
                    yield t
            for t in joiner.finish():
                yield t
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()

    # --- the server --------------------------------------------------

    async def ping(self) -> str:
        return (await self._read("Ping", pb.PingRequest())).server_version

    async def health(self) -> None:
        check = self._channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda _: b"",
            response_deserializer=lambda b: b)
        status = health_status(await self._unary(check, None))
        if status != 1:
            raise error_for(grpc.StatusCode.UNAVAILABLE,
                            "mentatd at %s is not serving (health status "
                            "%d)" % (self.target, status))

    async def backup(self, destination: str) -> BackupResult:
        return R.backup_result(await self._write(
            "Backup", pb.BackupRequest(database=self.database,
                                       destination=destination)))

    # --- databases ---------------------------------------------------

    async def databases(self) -> List[str]:
        r = await self._read("ListDatabases", pb.ListDatabasesRequest())
        return [d.name for d in r.databases]

    async def database_infos(self) -> List[DatabaseInfo]:
        r = await self._read("ListDatabases", pb.ListDatabasesRequest())
        return [R.database_info(d) for d in r.databases]

    async def create_database(self, name: str) -> int:
        return (await self._write(
            "CreateDatabase", pb.CreateDatabaseRequest(name=name))).basis_tx

    async def delete_database(self, name: str) -> None:
        await self._write("DeleteDatabase",
                          pb.DeleteDatabaseRequest(name=name))


__all__ = ["Client", "QueryStream"]
