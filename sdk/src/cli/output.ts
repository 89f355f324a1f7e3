// How dsvc speaks: tables and fields for people on stdout, one JSON document with --json for
// scripts; progress bars on stderr, only when it is a terminal.
import { MultiBar, type SingleBar } from 'cli-progress';

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

/** Rows as an aligned table, its columns those of the first row. */
export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)\n';
  const columns = Object.keys(rows[0]!);
  const texts = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...texts.map((t) => t[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return `${[line(columns), ...texts.map(line)].join('\n')}\n`;
}

/** An object's fields, one per line (lists as tables below). */
export function fields(object: Record<string, unknown>): string {
  const entries = Object.entries(object);
  const width = Math.max(...entries.map(([k]) => k.length));
  const plain = entries.filter(([, v]) => !Array.isArray(v)).map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`);
  const lists = entries.filter(([, v]) => Array.isArray(v)).map(([k, v]) => `\n${k}:\n${table(v as Record<string, unknown>[])}`);
  return `${plain.join('\n')}\n${lists.join('')}`;
}

export type Output = {
  json: boolean;
  /** The result: as JSON with --json, else as `human` renders it. */
  result(value: unknown, human?: (value: any) => string): void;
  /** A line for people on stderr (never with --json). */
  note(line: string): void;
  /** Progress bars, when stderr is a terminal and not --json. */
  bars(): Bars | undefined;
};

export function output(json: boolean): Output {
  return {
    json,
    result(value, human = (v) => (Array.isArray(v) ? table(v) : fields(v as Record<string, unknown>))) {
      process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : human(value));
    },
    note(line) {
      if (!json) process.stderr.write(`${line}\n`);
    },
    bars() {
      return !json && process.stderr.isTTY ? new Bars() : undefined;
    },
  };
}

const mb = (bytes: number) => (bytes / 1_000_000).toFixed(1);

/** An upload's two bars: bytes sent, then rows built (its percentage from the bytes the build has read). */
export class Bars {
  private readonly multi = new MultiBar(
    { stream: process.stderr, hideCursor: true, clearOnComplete: false, barsize: 30, fps: 10, format: ' {phase} |{bar}| {percentage}% | {detail}' },
    { barCompleteChar: '█', barIncompleteChar: '░', format: '' },
  );
  private uploading: SingleBar | undefined;
  private building: SingleBar | undefined;

  sent(bytesSent: number, bytesTotal: number | null): void {
    const total = bytesTotal ?? Math.max(bytesSent, 1);
    this.uploading ??= this.multi.create(total, 0, { phase: 'Uploading', detail: '' });
    this.uploading.setTotal(total);
    this.uploading.update(bytesSent, { phase: 'Uploading', detail: `${mb(bytesSent)}/${mb(total)} MB` });
  }

  built(rowsProcessed: number, bytesProcessed: number, bytesTotal: number | null): void {
    const total = bytesTotal ?? Math.max(bytesProcessed, 1);
    if (this.uploading) this.uploading.update(this.uploading.getTotal());
    this.building ??= this.multi.create(total, 0, { phase: 'Building ', detail: '' });
    this.building.setTotal(total);
    this.building.update(bytesProcessed, { phase: 'Building ', detail: `${rowsProcessed.toLocaleString('en')} rows` });
  }

  stop(): void {
    this.multi.stop();
  }
}
