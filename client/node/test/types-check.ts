// Compiled (not run) by types.test.js with tsc --strict: the API as a
// TypeScript user writes it must typecheck against index.d.ts.
import { Client, kw, LookupRef, Keyword, Instant, MentatError, ParseError, Datom, TxResult, Uuid } from '..';

async function main(): Promise<void> {
  const c = new Client('127.0.0.1:7878', { database: 'movies', timeoutMs: 1000 });
  const r: TxResult = await c.transact([{ ':db/id': 'x', ':a/b': kw(':c/d'), ':a/e': new LookupRef(':a/f', 'g') }, [':db/add', 'x', ':a/b', 1n]]);
  const id: bigint = r.tempids['x'];
  const s = await c.query('[:find ?e :where [?e :a/b]]', [1n, 'x', new Date()]).ready();
  const cols: string[] = s.columns;
  for await (const row of s) { const v = row[0]; }
  for await (const d of c.datoms('eavt', [id])) { const dd: Datom = d; const e: bigint = dd.e; }
  for await (const t of c.subscribe({ fromTx: r.tx })) { const n: number = t.datoms.length; break; }
  const p = await c.pull('[*]', [':a/b', 'x']);
  const sch = await c.schema();
  const k: Keyword | undefined = sch.attributes[':a/b']?.ident;
  const when: Instant = r.txInstant;
  const m: bigint = when.micros;
  await c.health();
  try { await c.ping(); } catch (e) { if (e instanceof ParseError) { const l: number | null = e.line; } if (e instanceof MentatError) { const code: number = e.code; } }
  const u = new Uuid('f81d4fae-7dec-11d0-a765-00a0c91e6bf6');
  c.asOf(r.basisBefore).since(1n).history().use('x').close();
}
main();
