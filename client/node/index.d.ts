// Types of @mentat/client (the code is plain JS in index.js and lib/).
/// <reference types="node" />

/** An EDN keyword; `text` and toString() are ":ns/name". */
export class Keyword {
  constructor(text: string);
  readonly text: string;
  readonly namespace: string | null;
  readonly name: string;
  equals(other: unknown): boolean;
  toString(): string;
}
/** kw(":user/email") or kw("user/email"). */
export function kw(text: string): Keyword;
export class Sym { constructor(text: string); readonly text: string; }
/** A :db.type/uri value, the URI reference as written (EDN #uri "..."). */
export class Uri { constructor(text: string); readonly text: string; equals(other: unknown): boolean; }
export class Char { constructor(c: string); readonly char: string; }
export class Uuid {
  constructor(text: string);
  readonly text: string;
  static fromBytes(bytes: Uint8Array): Uuid;
  toBytes(): Buffer;
  equals(other: unknown): boolean;
}
export class BigDec { constructor(text: string); readonly text: string; }
/** A number sent as a double even when integral (3 alone is a long). */
export class Double { constructor(n: number); readonly value: number; }
export class Tagged { constructor(tag: string, value: unknown); readonly tag: string; readonly value: EdnValue; }
/** EDN text taken as it is. */
export class Edn { constructor(text: string); readonly text: string; }
/** A query input as JSON text (or a value JSON.stringify'd). */
export class Json { constructor(text: unknown); readonly text: string; }
export class LookupRef { constructor(attribute: string | Keyword, value: unknown); readonly attribute: Keyword; readonly value: unknown; }
/** A Date that keeps mentatd's microseconds. */
export class Instant extends Date {
  constructor(micros: bigint | string | number);
  readonly micros: bigint;
  static fromDate(d: Date): Instant;
}

/** What a result value can be (see lib/values.js for the mapping). */
export type EdnValue =
  | null | boolean | bigint | number | string | Keyword | Sym | Uri | Char | Instant | Uuid | BigDec
  | Buffer | Tagged | EdnValue[] | Set<EdnValue> | Map<EdnValue, EdnValue>
  | { [key: string]: EdnValue };

/** What an input or a tx-data value can be. */
export type InputValue =
  | null | undefined | boolean | bigint | number | string | Keyword | Sym | Uri | URL | Char | Date | Uuid
  | BigDec | Double | Uint8Array | Tagged | Edn | LookupRef | InputValue[] | Set<InputValue>
  | Map<InputValue, InputValue> | { [key: string]: InputValue };

/** An entity: an id, an ident (Keyword or ":ns/name"), a lookup ref. */
export type EntityLike = bigint | number | string | Keyword | LookupRef | [string | Keyword, InputValue];
/** An entity map or an op array ([":db/add", e, a, v], ...). */
export type TxOp = { [attribute: string]: InputValue } | InputValue[] | Edn;
export type TxData = string | Edn | Iterable<TxOp>;

export function toEdn(x: InputValue): string;
export function txEdn(txData: TxData): string;

export type BasisKind = 'LATEST' | 'AS_OF' | 'SINCE' | 'HISTORY';
export interface Basis { kind: BasisKind; point: bigint | number | Date | null; dbTx: bigint; }
export function latest(dbTx?: bigint): Basis;
export function asOf(point: bigint | number | Date, dbTx?: bigint): Basis;
export function since(point: bigint | number | Date, dbTx?: bigint): Basis;
export function history(dbTx?: bigint): Basis;

export interface Datom { e: bigint; a: bigint; v: EdnValue; tx: bigint; added: boolean; }

export interface TxResult {
  tx: bigint;
  txInstant: Instant;
  basisBefore: bigint;
  basisAfter: bigint;
  tempids: { [tempid: string]: bigint };
  datomCount: number;
  datoms: Datom[];
  replayed: boolean;
  tempidsMissing: boolean;
  datomsOmitted: boolean;
  /** transact(..., { dryRun: true }): nothing was committed. */
  dryRun: boolean;
}

export interface LogTx { tx: bigint; txInstant: Instant; datoms: Datom[]; }

export interface Attribute {
  id: bigint; ident: Keyword; valueType: Keyword; many: boolean; unique: Keyword | null;
  index: boolean; isComponent: boolean; noHistory: boolean; fulltext: boolean; doc: string;
}
export interface Schema {
  attributes: { [ident: string]: Attribute };
  idents: { [ident: string]: bigint };
  basisTx: bigint;
}
export interface AttributeStats {
  attribute: bigint; ident: Keyword; datoms: bigint; distinctValues: bigint;
  valueCounts: { value: EdnValue; count: bigint }[];
}
export interface Stats {
  basisTx: bigint; basisTxInstant: Instant;
  attributes: { [ident: string]: AttributeStats };
  transactor: { [name: string]: bigint };
  storage: { [name: string]: bigint };
}
export interface DatabaseInfo { name: string; basisTx: bigint; basisTxInstant: Instant; diskSizeBytes: bigint; }
export interface BackupResult { basisTx: bigint; files: bigint; bytes: bigint; elapsedMicros: bigint; }
export interface ImportResult {
  transactions: bigint; datoms: bigint; firstTx: bigint; lastTx: bigint; basisTx: bigint;
  method: string; elapsedMicros: bigint;
}

export type Row = EdnValue[];
export type FindKind = 'FIND_RELATION' | 'FIND_COLLECTION' | 'FIND_TUPLE' | 'FIND_SCALAR';

export class QueryStream implements AsyncIterable<Row> {
  columns: string[];
  findKind: FindKind;
  basisTx: bigint;
  rowsSoFar: bigint;
  resumed: number;
  /** Resolves once the first message is read (columns set). */
  ready(): Promise<this>;
  batches(): AsyncGenerator<Row[]>;
  [Symbol.asyncIterator](): AsyncGenerator<Row>;
  cancel(): void;
}

export interface ClientOptions {
  database?: string;
  token?: string;
  tls?: boolean;
  rootCerts?: Buffer | string;
  serverName?: string;
  timeoutMs?: number;
  basis?: Basis;
  channelOptions?: { [name: string]: string | number };
}

export interface QueryOptions { limit?: number; timeoutMs?: number; batchRows?: number; resumeRetries?: number; }
export type QueryInput = InputValue | Edn | Json;

export class Client {
  constructor(target?: string, options?: ClientOptions);
  readonly target: string;
  readonly database: string;
  readonly basis: Basis;
  withBasis(basis: Basis): Client;
  asOf(point: bigint | number | Date): Client;
  since(point: bigint | number | Date): Client;
  history(): Client;
  use(database: string): Client;
  /** Speculative tx-data (EDN text) every read of this view applies first. */
  readonly withTxData: string[];
  /** The same connection reading as if txData were transacted (Datomic's `with`); nothing commits. */
  withTx(...txData: TxData[]): Client;
  close(): void;

  transact(txData: TxData, options?: { requestId?: string; returnDatoms?: boolean; dryRun?: boolean }): Promise<TxResult>;
  import(transactions: Iterable<TxData>, options?: { perMessage?: number }): Promise<ImportResult>;
  query(query: string, inputs?: QueryInput[], options?: QueryOptions): QueryStream;
  /** Rows shaped by the :find spec: rows, a list, one row, or one value. */
  q(query: string, inputs?: QueryInput[], options?: QueryOptions): Promise<any>;
  pull(pattern: string, entity: EntityLike): Promise<{ [key: string]: EdnValue }>;
  pullMany(pattern: string, entities: Iterable<EntityLike>): Promise<({ [key: string]: EdnValue } | null)[]>;
  datoms(index: 'eavt' | 'aevt' | 'avet' | 'vaet', components?: (InputValue | [string, InputValue])[],
         options?: { limit?: number; batchSize?: number; resumeRetries?: number }): AsyncGenerator<Datom>;
  explain(query: string, inputs?: QueryInput[], options?: { profile?: boolean }): Promise<string>;
  schema(): Promise<Schema>;
  stats(options?: { valueCounts?: boolean }): Promise<Stats>;
  txRange(fromTx?: bigint | number, toTx?: bigint | number): AsyncGenerator<LogTx>;
  subscribe(options?: { fromTx?: bigint | number; omitDatoms?: boolean }): AsyncGenerator<LogTx>;
  ping(): Promise<string>;
  /** grpc.health.v1: resolves when SERVING, rejects with Unavailable otherwise. */
  health(): Promise<void>;
  backup(destination: string): Promise<BackupResult>;
  databases(): Promise<string[]>;
  databaseInfos(): Promise<DatabaseInfo[]>;
  createDatabase(name: string): Promise<bigint>;
  deleteDatabase(name: string): Promise<void>;
}

/** A failed call: the gRPC code, the server's message, its EDN position. */
export class MentatError extends Error {
  readonly code: number;
  readonly codeName: string;
  readonly details: string;
  readonly line: number | null;
  readonly column: number | null;
}
export class InvalidArgument extends MentatError {}
export class ParseError extends InvalidArgument {}
export class NotFound extends MentatError {}
export class AlreadyExists extends MentatError {}
export class FailedPrecondition extends MentatError {}
export class Aborted extends MentatError {}
export class ResourceExhausted extends MentatError {}
export class Unavailable extends MentatError {}
export class DeadlineExceeded extends MentatError {}
export class Cancelled extends MentatError {}
export class PermissionDenied extends MentatError {}
export class Unauthenticated extends MentatError {}
export class Internal extends MentatError {}
export class OutOfRange extends InvalidArgument {}
export class Unimplemented extends MentatError {}
