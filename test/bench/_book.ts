import { parse } from 'csv-parse/sync';
import { realisticBlocks, realisticHeader } from '../support/realisticContracts.ts';
import { ContractLog } from '../../shared/ingest/contractLog.ts';
import { MetricsBook } from '../../shared/figures/book.ts';
import { contractTerm, type ContractTerm } from '../../shared/figures/definitions.ts';
import { CustomerLinesWriter, monthlyFigures } from '../../shared/figures/customerChanges.ts';
const rows = Number(process.argv[2] ?? 1_000_000);
const log = new ContractLog(1 << 18);
const names = new Map<string, number>(); const nameList: string[] = [];
const curs = new Map<string, number>(); const curList: string[] = [];
const dayOf = (s: string) => Math.floor(Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10)) / 86400000);
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const cache = `/tmp/booklog-${rows}.json`;
let t = performance.now();
if (existsSync(cache)) { const c = JSON.parse(readFileSync(cache, 'utf8')); nameList.push(...c.names); curList.push(...c.curs); const a = c.rows as number[]; for (let i = 0; i < a.length; i += 5) log.add(a[i]!, a[i+1]!, a[i+2]!, a[i+3]!, a[i+4]!); } else {
const flat: number[] = [];
for (const block of realisticBlocks(0, rows, rows)) {
  for (const r of parse(block) as string[][]) {
    let c = names.get(r[1]!); if (c === undefined) { c = nameList.length; names.set(r[1]!, c); nameList.push(r[1]!); }
    let k = curs.get(r[6]!); if (k === undefined) { k = curList.length; curs.set(r[6]!, k); curList.push(r[6]!); }
    flat.push(c, k, dayOf(r[3]!), dayOf(r[4]!), Math.round(Number(r[5]) * 100));
    log.add(c, k, dayOf(r[3]!), dayOf(r[4]!), Math.round(Number(r[5]) * 100));
  }
}
writeFileSync(cache, JSON.stringify({ names: nameList, curs: curList, rows: flat }));
}
console.log(`generated ${rows} in ${(performance.now() - t).toFixed(0)} ms; customers ${nameList.length}`);
t = performance.now();
const book = new MetricsBook();
const lines = new CustomerLinesWriter('ver_x', 1 << 30);
const terms: ContractTerm[] = [];
let steps = 0; let groups = 0, tTerms = 0, tBook = 0, tLines = 0;
log.forEachCustomer((g) => {
  groups++;
  let a = performance.now();
  terms.length = 0;
  for (let i = 0; i < g.count; i++) terms.push(contractTerm(g.startDays[i]!, g.endDays[i]!, g.cents[i]!));
  let b = performance.now(); tTerms += b - a;
  const changes = book.addCustomer(curList[g.currency]!, terms);
  a = performance.now(); tBook += a - b;
  steps += changes.length; if (changes.length > 0) lines.add(curList[g.currency]!, nameList[g.customer]!, changes);
  tLines += performance.now() - a;
});
const walk = performance.now() - t; const cpu = process.cpuUsage(); console.log(`cpu user ${(cpu.user/1000).toFixed(0)} ms`);
t = performance.now();
const f = monthlyFigures(book, lines); if (process.env.LINES_OUT) writeFileSync(process.env.LINES_OUT, Buffer.concat((f.customers.chunks ?? []) as Buffer[]));
console.log(`walk ${walk.toFixed(0)} ms (terms ${tTerms.toFixed(0)}, book ${tBook.toFixed(0)}, lines ${tLines.toFixed(0)}) groups ${groups} steps ${steps}; finish ${(performance.now() - t).toFixed(0)} ms; monthly ${f.monthly.length} cohorts ${f.cohorts.length} bytes ${f.customers.bytes}`);
import { createHash } from 'node:crypto';
console.log("digest", createHash("sha1").update(JSON.stringify([f.monthly, f.cohorts])).update(Buffer.concat((f.customers.chunks ?? []).map((c: any) => Buffer.from(c)))).digest("hex"));
console.log(`rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
if (process.env.CHECK_CELLS) {
  const cells = book.exactCells();
  let bad = 0;
  for (const { currency, cells: list } of cells) {
    let customers = 0; let n = 0n; let d = 1n;
    const byMonth = new Map(list.map((c) => [c.month, c]));
    for (const m of f.monthly.filter((x) => x.currency === currency)) {
      const [y, mo] = m.month.split('-').map(Number); const month = y! * 12 + mo! - 1;
      const c = byMonth.get(month);
      if (c) { customers += c.customers; n = n * c.mrr.d + c.mrr.n * d; d = d * c.mrr.d; }
      const cents = (2n * n * 1n + d) / (2n * d); // half up (non-negative)
      const shown = BigInt(m.mrr.replace('.', ''));
      if (customers !== m.activeCustomers || cents !== shown) bad++;
    }
  }
  console.log('exactCells check: mismatches', bad, 'currencies', cells.length);
}
