"""What the calls return, and the request pieces the blocking Client and
the asyncio one (aio.Client) share: one place that maps Python arguments to
the proto's requests and the proto's responses to Python values."""

import dataclasses
import datetime
from typing import (Any, Dict, Iterable, Iterator, List, NamedTuple,
                    Optional, TypeVar, Union)

from ._pb import mentat_pb2 as pb
from .values import (Edn, Json, Keyword, datetime_to_micros,
                     micros_to_datetime, to_python, to_value)

# The server accepts messages up to 64 MiB by default; gRPC's client
# default (4 MiB) would refuse a large pull or batch.
MAX_MESSAGE_BYTES = 64 << 20

Point = Union[int, datetime.datetime]


@dataclasses.dataclass(frozen=True)
class Basis:
    """Which database value a read sees: use latest(), as_of(), since(),
    history(). `point` is a tx id, a t, or a datetime; `db_tx` pins the
    database value an earlier response reported (0: the latest)."""
    kind: int = 0
    point: Optional[Point] = None
    db_tx: int = 0

    def to_proto(self, out: Any) -> Any:
        out.kind = self.kind
        if isinstance(self.point, datetime.datetime):
            out.instant_micros = datetime_to_micros(self.point)
        elif self.point is not None:
            out.tx = int(self.point)
        out.db_tx = self.db_tx
        return out


def latest(db_tx: int = 0) -> Basis:
    return Basis(pb.Basis.LATEST, None, db_tx)


def as_of(point: Point, db_tx: int = 0) -> Basis:
    return Basis(pb.Basis.AS_OF, point, db_tx)


def since(point: Point, db_tx: int = 0) -> Basis:
    return Basis(pb.Basis.SINCE, point, db_tx)


def history(db_tx: int = 0) -> Basis:
    return Basis(pb.Basis.HISTORY, None, db_tx)


_V = TypeVar("_V", bound="BasisViews")


class BasisViews:
    """The views both clients (blocking and asyncio) give of one
    connection: the same channel at another basis or on another database.
    A view never closes the channel it shares."""

    basis: Basis
    database: str
    _owns_channel: bool
    # Speculative tx-data every read of this view applies first (with_tx).
    with_tx_data: List[str] = []

    def _view(self: _V, **changes: Any) -> _V:
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._owns_channel = False
        view.__dict__.update(changes)
        return view

    def with_basis(self: _V, basis: Basis) -> _V:
        """The same connection reading at `basis` (a Basis)."""
        return self._view(basis=basis)

    def as_of(self: _V, point: Point) -> _V:
        return self.with_basis(as_of(point))

    def since(self: _V, point: Point) -> _V:
        return self.with_basis(since(point))

    def history(self: _V) -> _V:
        return self.with_basis(history())

    def use(self: _V, database: str) -> _V:
        """The same connection on another database."""
        return self._view(database=database)

    def with_tx(self: _V, *tx_data: Any) -> _V:
        """The same connection reading the database as if `tx_data` (each
        EDN text or Python data, like transact()'s) were transacted on top
        of it, in order, without committing anything (Datomic's `with`):
        queries, pulls, datoms and explain through the view send them as
        with_tx_data. A
        view of a view adds to its transactions."""
        from .tx import tx_edn
        return self._view(with_tx_data=list(self.with_tx_data) +
                          [tx_edn(t) for t in tx_data])


class QueryProgress:
    """What a query stream (blocking or asyncio) knows of its answer so far,
    kept up to date from each message; and how it takes QueryFirst's reply.
    The streams make the calls, which differ (one awaits); the bookkeeping
    is this one."""

    columns: List[str]
    find_kind: int
    basis_tx: int
    resume_token: bytes
    rows_so_far: int
    _request: Any
    _done: bool

    def _note(self, m: Any) -> None:
        if m.columns:
            self.columns = list(m.columns)
            self.find_kind = m.find_kind
        self.basis_tx = m.basis_tx
        if m.resume_token:
            self.resume_token = m.resume_token
        self.rows_so_far = m.rows_so_far

    def _take_first(self, m: Any) -> Any:
        """QueryFirst's reply `m` as the stream's first message, or None
        when the Query stream is to run the query from the start (`more`
        with no token: not a small query). A reply that says more sets the
        token the stream continues from; one that does not ends the
        stream."""
        if m.more and not m.resume_token:
            return None
        self._note(m)
        if m.more:
            self._request.resume_token = m.resume_token
        else:
            self._done = True
        return m


class Datom(NamedTuple):
    """[e a v tx added]; `a` is the attribute's id (schema() names it)."""
    e: int
    a: int
    v: Any
    tx: int
    added: bool


def datom(d: Any) -> Datom:
    return Datom(d.e, d.a, to_python(d.v), d.tx, d.added)


@dataclasses.dataclass
class TxResult:
    """What Transact answered."""
    tx: int
    tx_instant: datetime.datetime
    basis_before: int
    basis_after: int
    tempids: Dict[str, int]
    datom_count: int
    datoms: List[Datom]
    replayed: bool
    tempids_missing: bool
    # return_datoms was asked for, but the datoms would not fit in one
    # message: read them with tx_range(tx, tx + 1).
    datoms_omitted: bool = False
    # transact(dry_run=True): nothing was committed.
    dry_run: bool = False


def tx_result(r: Any) -> TxResult:
    return TxResult(r.tx, micros_to_datetime(r.tx_instant_micros),
                    r.basis_before, r.basis_after, dict(r.tempids),
                    r.datom_count, [datom(d) for d in r.datoms],
                    r.replayed, r.tempids_missing, r.datoms_omitted,
                    r.dry_run)


@dataclasses.dataclass
class LogTx:
    """One transaction of the log (tx_range, subscribe): every datom it
    wrote, in order (empty with omit_datoms)."""
    tx: int
    tx_instant: datetime.datetime
    datoms: List[Datom]


class TxJoiner:
    """Joins the parts of transactions that TxRange and Subscribe split
    across messages (consecutive entries with the same tx, each but the last
    `continued`), so callers see whole transactions."""

    def __init__(self) -> None:
        self._partial: Optional[LogTx] = None

    def feed(self, message: Any) -> Iterator[LogTx]:
        for t in message.transactions:
            if self._partial is not None and self._partial.tx != t.tx:
                yield self._partial  # a part whose rest never came
                self._partial = None
            if self._partial is None:
                self._partial = LogTx(
                    t.tx, micros_to_datetime(t.tx_instant_micros), [])
            self._partial.datoms.extend(datom(d) for d in t.datoms)
            if not t.continued:
                yield self._partial
                self._partial = None

    def finish(self) -> Iterator[LogTx]:
        if self._partial is not None:
            yield self._partial
            self._partial = None


def whole_transactions(messages: Iterable[Any]) -> Iterator[LogTx]:
    joiner = TxJoiner()
    for m in messages:
        yield from joiner.feed(m)
    yield from joiner.finish()


@dataclasses.dataclass
class Attribute:
    """An installed attribute (schema())."""
    id: int
    ident: Keyword
    value_type: Keyword
    many: bool
    unique: Optional[Keyword]  # :db.unique/value, :db.unique/identity
    index: bool
    is_component: bool
    no_history: bool
    fulltext: bool
    doc: str


@dataclasses.dataclass
class Schema:
    """The installed attributes by ident, every ident's entity id, and the
    basis read."""
    attributes: Dict[Keyword, Attribute]
    idents: Dict[Keyword, int]
    basis_tx: int

    def attribute(self, ident_or_id: Union[str, int]) -> Optional[Attribute]:
        """The attribute with this ident (":user/email") or id (a datom's
        `a`), or None."""
        if isinstance(ident_or_id, int):
            for a in self.attributes.values():
                if a.id == ident_or_id:
                    return a
            return None
        return self.attributes.get(Keyword(ident_or_id))


_UNIQUE = {0: None, 1: Keyword("db.unique/value"),
           2: Keyword("db.unique/identity")}


def schema(r: Any) -> Schema:
    attrs = {}
    for a in r.attributes:
        ident = Keyword(a.ident)
        attrs[ident] = Attribute(a.id, ident, Keyword(a.value_type), a.many,
                                 _UNIQUE.get(a.unique), a.index,
                                 a.is_component, a.no_history, a.fulltext,
                                 a.doc)
    return Schema(attrs, {Keyword(i.ident): i.entity for i in r.idents},
                  r.basis_tx)


@dataclasses.dataclass
class AttributeStats:
    attribute: int
    ident: Keyword
    datoms: int
    distinct_values: int
    # value -> count, when asked for and tracked for the attribute.
    value_counts: Dict[Any, int]


@dataclasses.dataclass
class Stats:
    """stats(): per-attribute counts, and the transactor's and storage's
    figures as dicts named as in the proto (TransactorStats, StorageStats)."""
    basis_tx: int
    basis_tx_instant: datetime.datetime
    attributes: Dict[Keyword, AttributeStats]
    transactor: Dict[str, int]
    storage: Dict[str, int]


def _fields(m: Any) -> Dict[str, int]:
    return {f.name: getattr(m, f.name) for f in m.DESCRIPTOR.fields}


def stats(r: Any) -> Stats:
    attrs = {}
    for a in r.attributes:
        ident = Keyword(a.ident)
        attrs[ident] = AttributeStats(
            a.attribute, ident, a.datoms, a.distinct_values,
            {to_python(c.value): c.count for c in a.value_counts})
    return Stats(r.basis_tx, micros_to_datetime(r.basis_tx_instant_micros),
                 attrs, _fields(r.transactor), _fields(r.storage))


@dataclasses.dataclass
class DatabaseInfo:
    name: str
    basis_tx: int
    basis_tx_instant: datetime.datetime
    disk_size_bytes: int


def database_info(d: Any) -> DatabaseInfo:
    return DatabaseInfo(d.name, d.basis_tx,
                        micros_to_datetime(d.basis_tx_instant_micros),
                        d.disk_size_bytes)


@dataclasses.dataclass
class BackupResult:
    """backup(): the last transaction the backup holds, its files and
    bytes, the server's time for it."""
    basis_tx: int
    files: int
    bytes: int
    elapsed: datetime.timedelta


def backup_result(r: Any) -> BackupResult:
    return BackupResult(r.basis_tx, r.files, r.bytes,
                        datetime.timedelta(microseconds=r.elapsed_micros))


@dataclasses.dataclass
class ImportResult:
    """import_(): transactions and datoms written, the first and last tx,
    the basis after, how ("ingest" or "transact"), the server's time."""
    transactions: int
    datoms: int
    first_tx: int
    last_tx: int
    basis_tx: int
    method: str
    elapsed: datetime.timedelta


def import_result(r: Any) -> ImportResult:
    return ImportResult(r.transactions, r.datoms, r.first_tx, r.last_tx,
                        r.basis_tx, r.method,
                        datetime.timedelta(microseconds=r.elapsed_micros))


# --- request pieces --------------------------------------------------------

EntityLike = Union[int, str, Keyword, tuple, list]

INDEXES = {"eavt": pb.EAVT, "aevt": pb.AEVT, "avet": pb.AVET,
           "vaet": pb.VAET}


def entity_ref(x: EntityLike, out: Any) -> Any:
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


def input_value(x: Any, out: Any) -> Any:
    if isinstance(x, Edn):
        out.edn = str(x)
    elif isinstance(x, Json):
        out.json = str(x)
    else:
        to_value(x, out.value)
    return out


def component(x: Any, out: Any) -> Any:
    """A Datoms component: ints are ids (or longs), Keywords idents, a str
    starting with ':' a keyword too (an attribute or ident), a pair a lookup
    ref; anything else a value."""
    if isinstance(x, str) and not isinstance(x, Keyword) and \
            x.startswith(":"):
        x = Keyword(x)
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str):
        x = [Keyword(x[0]), x[1]]
    return to_value(x, out)


def index_of(index: Union[str, int]) -> Any:
    if isinstance(index, str):
        try:
            return INDEXES[index.lower()]
        except KeyError:
            raise ValueError("mentat_client: unknown index %r (eavt, aevt, "
                             "avet, vaet)" % index) from None
    return int(index)


def shape(find_kind: int, rows: List[List[Any]]) -> Any:
    """Rows shaped by the :find spec: a list of rows (relation), a list of
    values (collection), one row or None (tuple), one value or None
    (scalar)."""
    if find_kind == pb.FIND_COLLECTION:
        return [r[0] for r in rows]
    if find_kind == pb.FIND_TUPLE:
        return rows[0] if rows else None
    if find_kind == pb.FIND_SCALAR:
        return rows[0][0] if rows else None
    return rows


def channel_options(server_name: Optional[str],
                    options: Iterable[Any]) -> List[Any]:
    opts: List[Any] = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]
    if server_name:
        opts.append(("grpc.ssl_target_name_override", server_name))
    opts.extend(options)
    return opts


def root_certs(roots: Union[None, bytes, str]) -> Optional[bytes]:
    if isinstance(roots, str):
        with open(roots, "rb") as f:
            return f.read()
    return roots


def auth_metadata(token: Optional[str]) -> tuple:
    return (("authorization", "Bearer " + token),) if token else ()
