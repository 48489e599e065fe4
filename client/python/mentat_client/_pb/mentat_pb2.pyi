# Generated from proto/mentat/v1/mentat.proto by client/python/gen_proto.py.
# Do not edit; rerun it after changing the proto.
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

AEVT: Index
AVET: Index
DESCRIPTOR: _descriptor.FileDescriptor
EAVT: Index
FIND_COLLECTION: FindKind
FIND_KIND_UNSPECIFIED: FindKind
FIND_RELATION: FindKind
FIND_SCALAR: FindKind
FIND_TUPLE: FindKind
INDEX_UNSPECIFIED: Index
VAET: Index

class Attribute(_message.Message):
    __slots__ = ["doc", "fulltext", "id", "ident", "index", "is_component", "many", "no_history", "unique", "value_type"]
    class Unique(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    DOC_FIELD_NUMBER: _ClassVar[int]
    FULLTEXT_FIELD_NUMBER: _ClassVar[int]
    IDENT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    IS_COMPONENT_FIELD_NUMBER: _ClassVar[int]
    MANY_FIELD_NUMBER: _ClassVar[int]
    NO_HISTORY_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_IDENTITY: Attribute.Unique
    UNIQUE_NONE: Attribute.Unique
    UNIQUE_VALUE: Attribute.Unique
    VALUE_TYPE_FIELD_NUMBER: _ClassVar[int]
    doc: str
    fulltext: bool
    id: int
    ident: str
    index: bool
    is_component: bool
    many: bool
    no_history: bool
    unique: Attribute.Unique
    value_type: str
    def __init__(self, id: _Optional[int] = ..., ident: _Optional[str] = ..., value_type: _Optional[str] = ..., many: bool = ..., unique: _Optional[_Union[Attribute.Unique, str]] = ..., index: bool = ..., is_component: bool = ..., no_history: bool = ..., fulltext: bool = ..., doc: _Optional[str] = ...) -> None: ...

class AttributeStats(_message.Message):
    __slots__ = ["attribute", "datoms", "distinct_values", "ident", "value_counts"]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    DISTINCT_VALUES_FIELD_NUMBER: _ClassVar[int]
    IDENT_FIELD_NUMBER: _ClassVar[int]
    VALUE_COUNTS_FIELD_NUMBER: _ClassVar[int]
    attribute: int
    datoms: int
    distinct_values: int
    ident: str
    value_counts: _containers.RepeatedCompositeFieldContainer[ValueCount]
    def __init__(self, attribute: _Optional[int] = ..., ident: _Optional[str] = ..., datoms: _Optional[int] = ..., distinct_values: _Optional[int] = ..., value_counts: _Optional[_Iterable[_Union[ValueCount, _Mapping]]] = ...) -> None: ...

class BackupRequest(_message.Message):
    __slots__ = ["database", "destination"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    database: str
    destination: str
    def __init__(self, database: _Optional[str] = ..., destination: _Optional[str] = ...) -> None: ...

class BackupResponse(_message.Message):
    __slots__ = ["basis_tx", "bytes", "elapsed_micros", "files"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MICROS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    bytes: int
    elapsed_micros: int
    files: int
    def __init__(self, basis_tx: _Optional[int] = ..., files: _Optional[int] = ..., bytes: _Optional[int] = ..., elapsed_micros: _Optional[int] = ...) -> None: ...

class Basis(_message.Message):
    __slots__ = ["db_tx", "instant_micros", "kind", "tx"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    AS_OF: Basis.Kind
    DB_TX_FIELD_NUMBER: _ClassVar[int]
    HISTORY: Basis.Kind
    INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LATEST: Basis.Kind
    SINCE: Basis.Kind
    TX_FIELD_NUMBER: _ClassVar[int]
    db_tx: int
    instant_micros: int
    kind: Basis.Kind
    tx: int
    def __init__(self, kind: _Optional[_Union[Basis.Kind, str]] = ..., tx: _Optional[int] = ..., instant_micros: _Optional[int] = ..., db_tx: _Optional[int] = ...) -> None: ...

class CreateDatabaseRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CreateDatabaseResponse(_message.Message):
    __slots__ = ["basis_tx", "name"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    name: str
    def __init__(self, name: _Optional[str] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class DatabaseInfo(_message.Message):
    __slots__ = ["basis_tx", "basis_tx_instant_micros", "disk_size_bytes", "name"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    BASIS_TX_INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    DISK_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    basis_tx_instant_micros: int
    disk_size_bytes: int
    name: str
    def __init__(self, name: _Optional[str] = ..., basis_tx: _Optional[int] = ..., basis_tx_instant_micros: _Optional[int] = ..., disk_size_bytes: _Optional[int] = ...) -> None: ...

class Datom(_message.Message):
    __slots__ = ["a", "added", "e", "tx", "v"]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    A_FIELD_NUMBER: _ClassVar[int]
    E_FIELD_NUMBER: _ClassVar[int]
    TX_FIELD_NUMBER: _ClassVar[int]
    V_FIELD_NUMBER: _ClassVar[int]
    a: int
    added: bool
    e: int
    tx: int
    v: Value
    def __init__(self, e: _Optional[int] = ..., a: _Optional[int] = ..., v: _Optional[_Union[Value, _Mapping]] = ..., tx: _Optional[int] = ..., added: bool = ...) -> None: ...

class DatomsRequest(_message.Message):
    __slots__ = ["basis", "batch_size", "components", "database", "index", "limit", "min_basis_tx", "resume_token", "with_tx_data"]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WITH_TX_DATA_FIELD_NUMBER: _ClassVar[int]
    basis: Basis
    batch_size: int
    components: _containers.RepeatedCompositeFieldContainer[Value]
    database: str
    index: Index
    limit: int
    min_basis_tx: int
    resume_token: bytes
    with_tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., index: _Optional[_Union[Index, str]] = ..., components: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., basis: _Optional[_Union[Basis, _Mapping]] = ..., limit: _Optional[int] = ..., batch_size: _Optional[int] = ..., resume_token: _Optional[bytes] = ..., min_basis_tx: _Optional[int] = ..., with_tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class DatomsResponse(_message.Message):
    __slots__ = ["basis_tx", "datoms", "resume_token"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    datoms: _containers.RepeatedCompositeFieldContainer[Datom]
    resume_token: bytes
    def __init__(self, basis_tx: _Optional[int] = ..., datoms: _Optional[_Iterable[_Union[Datom, _Mapping]]] = ..., resume_token: _Optional[bytes] = ...) -> None: ...

class DeleteDatabaseRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteDatabaseResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class EntityRef(_message.Message):
    __slots__ = ["id", "ident", "lookup"]
    IDENT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LOOKUP_FIELD_NUMBER: _ClassVar[int]
    id: int
    ident: str
    lookup: LookupRef
    def __init__(self, id: _Optional[int] = ..., ident: _Optional[str] = ..., lookup: _Optional[_Union[LookupRef, _Mapping]] = ...) -> None: ...

class ExplainRequest(_message.Message):
    __slots__ = ["basis", "database", "inputs", "min_basis_tx", "profile", "query", "with_tx_data"]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    WITH_TX_DATA_FIELD_NUMBER: _ClassVar[int]
    basis: Basis
    database: str
    inputs: _containers.RepeatedCompositeFieldContainer[Input]
    min_basis_tx: int
    profile: bool
    query: str
    with_tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., query: _Optional[str] = ..., inputs: _Optional[_Iterable[_Union[Input, _Mapping]]] = ..., basis: _Optional[_Union[Basis, _Mapping]] = ..., profile: bool = ..., min_basis_tx: _Optional[int] = ..., with_tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class ExplainResponse(_message.Message):
    __slots__ = ["basis_tx", "plan"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    plan: str
    def __init__(self, plan: _Optional[str] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class Ident(_message.Message):
    __slots__ = ["entity", "ident"]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    IDENT_FIELD_NUMBER: _ClassVar[int]
    entity: int
    ident: str
    def __init__(self, ident: _Optional[str] = ..., entity: _Optional[int] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ["database", "tx_data"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    TX_DATA_FIELD_NUMBER: _ClassVar[int]
    database: str
    tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class ImportResponse(_message.Message):
    __slots__ = ["basis_tx", "datoms", "elapsed_micros", "first_tx", "last_tx", "method", "transactions"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MICROS_FIELD_NUMBER: _ClassVar[int]
    FIRST_TX_FIELD_NUMBER: _ClassVar[int]
    LAST_TX_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    datoms: int
    elapsed_micros: int
    first_tx: int
    last_tx: int
    method: str
    transactions: int
    def __init__(self, transactions: _Optional[int] = ..., datoms: _Optional[int] = ..., first_tx: _Optional[int] = ..., last_tx: _Optional[int] = ..., basis_tx: _Optional[int] = ..., method: _Optional[str] = ..., elapsed_micros: _Optional[int] = ...) -> None: ...

class Input(_message.Message):
    __slots__ = ["edn", "json", "value"]
    EDN_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    edn: str
    json: str
    value: Value
    def __init__(self, edn: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ..., json: _Optional[str] = ...) -> None: ...

class ListDatabasesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListDatabasesResponse(_message.Message):
    __slots__ = ["databases"]
    DATABASES_FIELD_NUMBER: _ClassVar[int]
    databases: _containers.RepeatedCompositeFieldContainer[DatabaseInfo]
    def __init__(self, databases: _Optional[_Iterable[_Union[DatabaseInfo, _Mapping]]] = ...) -> None: ...

class LookupRef(_message.Message):
    __slots__ = ["attribute", "value"]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    attribute: str
    value: Value
    def __init__(self, attribute: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...

class MapEntry(_message.Message):
    __slots__ = ["key", "value"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: Value
    value: Value
    def __init__(self, key: _Optional[_Union[Value, _Mapping]] = ..., value: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...

class PingRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class PingResponse(_message.Message):
    __slots__ = ["server_version"]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    server_version: str
    def __init__(self, server_version: _Optional[str] = ...) -> None: ...

class PullManyRequest(_message.Message):
    __slots__ = ["basis", "database", "entities", "min_basis_tx", "pattern", "with_tx_data"]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    WITH_TX_DATA_FIELD_NUMBER: _ClassVar[int]
    basis: Basis
    database: str
    entities: _containers.RepeatedCompositeFieldContainer[EntityRef]
    min_basis_tx: int
    pattern: str
    with_tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., pattern: _Optional[str] = ..., entities: _Optional[_Iterable[_Union[EntityRef, _Mapping]]] = ..., basis: _Optional[_Union[Basis, _Mapping]] = ..., min_basis_tx: _Optional[int] = ..., with_tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class PullManyResponse(_message.Message):
    __slots__ = ["basis_tx", "results"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    results: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, results: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class PullRequest(_message.Message):
    __slots__ = ["basis", "database", "entity", "min_basis_tx", "pattern", "with_tx_data"]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    WITH_TX_DATA_FIELD_NUMBER: _ClassVar[int]
    basis: Basis
    database: str
    entity: EntityRef
    min_basis_tx: int
    pattern: str
    with_tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., pattern: _Optional[str] = ..., entity: _Optional[_Union[EntityRef, _Mapping]] = ..., basis: _Optional[_Union[Basis, _Mapping]] = ..., min_basis_tx: _Optional[int] = ..., with_tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class PullResponse(_message.Message):
    __slots__ = ["basis_tx", "result"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    result: Value
    def __init__(self, result: _Optional[_Union[Value, _Mapping]] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ["basis", "batch_rows", "database", "inputs", "limit", "min_basis_tx", "query", "resume_token", "timeout_ms", "with_tx_data"]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    BATCH_ROWS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    WITH_TX_DATA_FIELD_NUMBER: _ClassVar[int]
    basis: Basis
    batch_rows: int
    database: str
    inputs: _containers.RepeatedCompositeFieldContainer[Input]
    limit: int
    min_basis_tx: int
    query: str
    resume_token: bytes
    timeout_ms: int
    with_tx_data: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, database: _Optional[str] = ..., query: _Optional[str] = ..., inputs: _Optional[_Iterable[_Union[Input, _Mapping]]] = ..., basis: _Optional[_Union[Basis, _Mapping]] = ..., limit: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., batch_rows: _Optional[int] = ..., resume_token: _Optional[bytes] = ..., min_basis_tx: _Optional[int] = ..., with_tx_data: _Optional[_Iterable[str]] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ["basis_tx", "columns", "find_kind", "more", "resume_token", "rows", "rows_so_far"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    FIND_KIND_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    ROWS_SO_FAR_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    columns: _containers.RepeatedScalarFieldContainer[str]
    find_kind: FindKind
    more: bool
    resume_token: bytes
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    rows_so_far: int
    def __init__(self, columns: _Optional[_Iterable[str]] = ..., find_kind: _Optional[_Union[FindKind, str]] = ..., basis_tx: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., resume_token: _Optional[bytes] = ..., rows_so_far: _Optional[int] = ..., more: bool = ...) -> None: ...

class ReplicationStats(_message.Message):
    __slots__ = ["cluster", "durability", "lag_ms", "lag_tx", "node_id", "primary", "primary_basis_tx", "role", "semi_sync_acked_tx", "semi_sync_timeouts", "semi_sync_waiting", "term"]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    LAG_MS_FIELD_NUMBER: _ClassVar[int]
    LAG_TX_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SEMI_SYNC_ACKED_TX_FIELD_NUMBER: _ClassVar[int]
    SEMI_SYNC_TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    SEMI_SYNC_WAITING_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    durability: str
    lag_ms: int
    lag_tx: int
    node_id: str
    primary: str
    primary_basis_tx: int
    role: str
    semi_sync_acked_tx: int
    semi_sync_timeouts: int
    semi_sync_waiting: int
    term: int
    def __init__(self, role: _Optional[str] = ..., term: _Optional[int] = ..., primary: _Optional[str] = ..., cluster: _Optional[str] = ..., node_id: _Optional[str] = ..., primary_basis_tx: _Optional[int] = ..., lag_tx: _Optional[int] = ..., lag_ms: _Optional[int] = ..., durability: _Optional[str] = ..., semi_sync_waiting: _Optional[int] = ..., semi_sync_acked_tx: _Optional[int] = ..., semi_sync_timeouts: _Optional[int] = ...) -> None: ...

class ResumeToken(_message.Message):
    __slots__ = ["db_tx", "last_key", "position", "request_digest", "rows_digest", "same_key_count", "version"]
    DB_TX_FIELD_NUMBER: _ClassVar[int]
    LAST_KEY_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_DIGEST_FIELD_NUMBER: _ClassVar[int]
    ROWS_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SAME_KEY_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    db_tx: int
    last_key: bytes
    position: int
    request_digest: int
    rows_digest: int
    same_key_count: int
    version: int
    def __init__(self, version: _Optional[int] = ..., request_digest: _Optional[int] = ..., db_tx: _Optional[int] = ..., position: _Optional[int] = ..., rows_digest: _Optional[int] = ..., last_key: _Optional[bytes] = ..., same_key_count: _Optional[int] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class SchemaRequest(_message.Message):
    __slots__ = ["database", "min_basis_tx"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    database: str
    min_basis_tx: int
    def __init__(self, database: _Optional[str] = ..., min_basis_tx: _Optional[int] = ...) -> None: ...

class SchemaResponse(_message.Message):
    __slots__ = ["attributes", "basis_tx", "idents"]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    IDENTS_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.RepeatedCompositeFieldContainer[Attribute]
    basis_tx: int
    idents: _containers.RepeatedCompositeFieldContainer[Ident]
    def __init__(self, attributes: _Optional[_Iterable[_Union[Attribute, _Mapping]]] = ..., idents: _Optional[_Iterable[_Union[Ident, _Mapping]]] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ["database", "min_basis_tx", "value_counts"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    VALUE_COUNTS_FIELD_NUMBER: _ClassVar[int]
    database: str
    min_basis_tx: int
    value_counts: bool
    def __init__(self, database: _Optional[str] = ..., value_counts: bool = ..., min_basis_tx: _Optional[int] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ["attributes", "basis_tx", "basis_tx_instant_micros", "replication", "storage", "transactor"]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    BASIS_TX_INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    STORAGE_FIELD_NUMBER: _ClassVar[int]
    TRANSACTOR_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.RepeatedCompositeFieldContainer[AttributeStats]
    basis_tx: int
    basis_tx_instant_micros: int
    replication: ReplicationStats
    storage: StorageStats
    transactor: TransactorStats
    def __init__(self, basis_tx: _Optional[int] = ..., basis_tx_instant_micros: _Optional[int] = ..., attributes: _Optional[_Iterable[_Union[AttributeStats, _Mapping]]] = ..., transactor: _Optional[_Union[TransactorStats, _Mapping]] = ..., storage: _Optional[_Union[StorageStats, _Mapping]] = ..., replication: _Optional[_Union[ReplicationStats, _Mapping]] = ...) -> None: ...

class StorageStats(_message.Message):
    __slots__ = ["block_cache_hits", "block_cache_misses", "block_cache_usage_bytes", "column_cache_bytes", "compactions_pending_bytes", "disk_size_bytes", "entity_cache_bytes", "estimated_keys", "memtable_bytes", "table_readers_bytes", "value_cache_bytes"]
    BLOCK_CACHE_HITS_FIELD_NUMBER: _ClassVar[int]
    BLOCK_CACHE_MISSES_FIELD_NUMBER: _ClassVar[int]
    BLOCK_CACHE_USAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    COLUMN_CACHE_BYTES_FIELD_NUMBER: _ClassVar[int]
    COMPACTIONS_PENDING_BYTES_FIELD_NUMBER: _ClassVar[int]
    DISK_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ENTITY_CACHE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_KEYS_FIELD_NUMBER: _ClassVar[int]
    MEMTABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TABLE_READERS_BYTES_FIELD_NUMBER: _ClassVar[int]
    VALUE_CACHE_BYTES_FIELD_NUMBER: _ClassVar[int]
    block_cache_hits: int
    block_cache_misses: int
    block_cache_usage_bytes: int
    column_cache_bytes: int
    compactions_pending_bytes: int
    disk_size_bytes: int
    entity_cache_bytes: int
    estimated_keys: int
    memtable_bytes: int
    table_readers_bytes: int
    value_cache_bytes: int
    def __init__(self, disk_size_bytes: _Optional[int] = ..., block_cache_usage_bytes: _Optional[int] = ..., block_cache_hits: _Optional[int] = ..., block_cache_misses: _Optional[int] = ..., estimated_keys: _Optional[int] = ..., memtable_bytes: _Optional[int] = ..., compactions_pending_bytes: _Optional[int] = ..., entity_cache_bytes: _Optional[int] = ..., value_cache_bytes: _Optional[int] = ..., column_cache_bytes: _Optional[int] = ..., table_readers_bytes: _Optional[int] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ["database", "from_tx", "min_basis_tx", "omit_datoms"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    FROM_TX_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    OMIT_DATOMS_FIELD_NUMBER: _ClassVar[int]
    database: str
    from_tx: int
    min_basis_tx: int
    omit_datoms: bool
    def __init__(self, database: _Optional[str] = ..., from_tx: _Optional[int] = ..., omit_datoms: bool = ..., min_basis_tx: _Optional[int] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ["basis_tx", "transactions"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    transactions: _containers.RepeatedCompositeFieldContainer[Transaction]
    def __init__(self, transactions: _Optional[_Iterable[_Union[Transaction, _Mapping]]] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class TaggedValue(_message.Message):
    __slots__ = ["tag", "value"]
    TAG_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    tag: str
    value: Value
    def __init__(self, tag: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...

class TransactRequest(_message.Message):
    __slots__ = ["database", "dry_run", "request_id", "return_datoms", "tx_data"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RETURN_DATOMS_FIELD_NUMBER: _ClassVar[int]
    TX_DATA_FIELD_NUMBER: _ClassVar[int]
    database: str
    dry_run: bool
    request_id: str
    return_datoms: bool
    tx_data: str
    def __init__(self, database: _Optional[str] = ..., tx_data: _Optional[str] = ..., request_id: _Optional[str] = ..., return_datoms: bool = ..., dry_run: bool = ...) -> None: ...

class TransactResponse(_message.Message):
    __slots__ = ["basis_after", "basis_before", "datom_count", "datoms", "datoms_omitted", "dry_run", "replayed", "tempids", "tempids_missing", "tx", "tx_instant_micros"]
    class TempidsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    BASIS_AFTER_FIELD_NUMBER: _ClassVar[int]
    BASIS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    DATOMS_OMITTED_FIELD_NUMBER: _ClassVar[int]
    DATOM_COUNT_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TEMPIDS_FIELD_NUMBER: _ClassVar[int]
    TEMPIDS_MISSING_FIELD_NUMBER: _ClassVar[int]
    TX_FIELD_NUMBER: _ClassVar[int]
    TX_INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    basis_after: int
    basis_before: int
    datom_count: int
    datoms: _containers.RepeatedCompositeFieldContainer[Datom]
    datoms_omitted: bool
    dry_run: bool
    replayed: bool
    tempids: _containers.ScalarMap[str, int]
    tempids_missing: bool
    tx: int
    tx_instant_micros: int
    def __init__(self, tx: _Optional[int] = ..., tx_instant_micros: _Optional[int] = ..., basis_before: _Optional[int] = ..., basis_after: _Optional[int] = ..., tempids: _Optional[_Mapping[str, int]] = ..., datom_count: _Optional[int] = ..., datoms: _Optional[_Iterable[_Union[Datom, _Mapping]]] = ..., replayed: bool = ..., tempids_missing: bool = ..., datoms_omitted: bool = ..., dry_run: bool = ...) -> None: ...

class Transaction(_message.Message):
    __slots__ = ["continued", "datoms", "tx", "tx_instant_micros"]
    CONTINUED_FIELD_NUMBER: _ClassVar[int]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    TX_FIELD_NUMBER: _ClassVar[int]
    TX_INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    continued: bool
    datoms: _containers.RepeatedCompositeFieldContainer[Datom]
    tx: int
    tx_instant_micros: int
    def __init__(self, tx: _Optional[int] = ..., tx_instant_micros: _Optional[int] = ..., datoms: _Optional[_Iterable[_Union[Datom, _Mapping]]] = ..., continued: bool = ...) -> None: ...

class TransactorStats(_message.Message):
    __slots__ = ["datoms", "failed_transactions", "groups", "largest_group", "queue_depth", "transactions"]
    DATOMS_FIELD_NUMBER: _ClassVar[int]
    FAILED_TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    LARGEST_GROUP_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    datoms: int
    failed_transactions: int
    groups: int
    largest_group: int
    queue_depth: int
    transactions: int
    def __init__(self, groups: _Optional[int] = ..., transactions: _Optional[int] = ..., failed_transactions: _Optional[int] = ..., datoms: _Optional[int] = ..., largest_group: _Optional[int] = ..., queue_depth: _Optional[int] = ...) -> None: ...

class TxRangeRequest(_message.Message):
    __slots__ = ["database", "from_tx", "min_basis_tx", "to_tx"]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    FROM_TX_FIELD_NUMBER: _ClassVar[int]
    MIN_BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    TO_TX_FIELD_NUMBER: _ClassVar[int]
    database: str
    from_tx: int
    min_basis_tx: int
    to_tx: int
    def __init__(self, database: _Optional[str] = ..., from_tx: _Optional[int] = ..., to_tx: _Optional[int] = ..., min_basis_tx: _Optional[int] = ...) -> None: ...

class TxRangeResponse(_message.Message):
    __slots__ = ["basis_tx", "transactions"]
    BASIS_TX_FIELD_NUMBER: _ClassVar[int]
    TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    basis_tx: int
    transactions: _containers.RepeatedCompositeFieldContainer[Transaction]
    def __init__(self, transactions: _Optional[_Iterable[_Union[Transaction, _Mapping]]] = ..., basis_tx: _Optional[int] = ...) -> None: ...

class Value(_message.Message):
    __slots__ = ["bigdec", "bigint", "boolean", "bytes_value", "char_value", "double_value", "instant_micros", "keyword", "list", "long_value", "map", "nil", "ref", "set", "string_value", "symbol", "tagged", "tuple", "uri", "uuid"]
    BIGDEC_FIELD_NUMBER: _ClassVar[int]
    BIGINT_FIELD_NUMBER: _ClassVar[int]
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    CHAR_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    INSTANT_MICROS_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    LONG_VALUE_FIELD_NUMBER: _ClassVar[int]
    MAP_FIELD_NUMBER: _ClassVar[int]
    NIL_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    TAGGED_FIELD_NUMBER: _ClassVar[int]
    TUPLE_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    bigdec: str
    bigint: str
    boolean: bool
    bytes_value: bytes
    char_value: int
    double_value: float
    instant_micros: int
    keyword: str
    list: ValueList
    long_value: int
    map: ValueMap
    nil: bool
    ref: int
    set: ValueList
    string_value: str
    symbol: str
    tagged: TaggedValue
    tuple: ValueList
    uri: str
    uuid: bytes
    def __init__(self, nil: bool = ..., long_value: _Optional[int] = ..., ref: _Optional[int] = ..., double_value: _Optional[float] = ..., string_value: _Optional[str] = ..., keyword: _Optional[str] = ..., boolean: bool = ..., instant_micros: _Optional[int] = ..., uuid: _Optional[bytes] = ..., bigint: _Optional[str] = ..., bigdec: _Optional[str] = ..., bytes_value: _Optional[bytes] = ..., symbol: _Optional[str] = ..., char_value: _Optional[int] = ..., list: _Optional[_Union[ValueList, _Mapping]] = ..., set: _Optional[_Union[ValueList, _Mapping]] = ..., map: _Optional[_Union[ValueMap, _Mapping]] = ..., tagged: _Optional[_Union[TaggedValue, _Mapping]] = ..., uri: _Optional[str] = ..., tuple: _Optional[_Union[ValueList, _Mapping]] = ...) -> None: ...

class ValueCount(_message.Message):
    __slots__ = ["count", "value"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    count: int
    value: Value
    def __init__(self, value: _Optional[_Union[Value, _Mapping]] = ..., count: _Optional[int] = ...) -> None: ...

class ValueList(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class ValueMap(_message.Message):
    __slots__ = ["entries"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[MapEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[MapEntry, _Mapping]]] = ...) -> None: ...

class FindKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Index(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
