// The contract file's format, for people: columns, reading rules, limits, and each row error code
// with how to fix it. Rendered from the contract's own table (shared/contract/fields.ts), as
// Markdown for the reference (the Versions section) and as HTML for the
// ingest-validation-failed problem page, so that neither can drift from what the service checks.
import { CONTRACT_FIELDS, type ContractField, ROW_ERROR_CODES } from '../shared/contract/fields.ts';
import { escapeHtml } from './html.ts';
import { atThisServer, validationProblemExample } from './examples.ts';

const typeOf = (f: ContractField) =>
  f.kind === 'string' ? `text, at most ${f.maxLength} characters` : { date: 'date YYYY-MM-DD', decimal: 'decimal ≥ 0, at most 2 decimals', currency: 'ISO 4217 code (EUR)' }[f.kind];

const rulesOf = (f: ContractField) =>
  [
    f.required ? 'required' : 'optional',
    f.gating ? 'needed for the metrics (a row without it counts as excluded, no error)' : '',
    'unique' in f && f.unique ? 'unique within the file' : '',
    'notBefore' in f && f.notBefore ? `not before ${f.notBefore}` : '',
  ]
    .filter(Boolean)
    .join('; ');

export const CSV_RULES = [
  'UTF-8, with or without a byte order mark.',
  'The delimiter is a comma, a semicolon or a tab, detected from the header line.',
  'RFC 4180 quoting: a cell holding the delimiter, a quote or a line break is quoted, quotes inside doubled ("").',
  'Lines end with CRLF or LF.',
  'The first record is the header. Names match whatever their case and surrounding spaces; unknown columns are ignored; the order is free.',
  'Rows are numbered as a spreadsheet shows them: the header is row 1. A quoted cell over several lines is still one row.',
  'An empty cell is an absent value.',
  'Limits: the file up to MAX_UPLOAD_BYTES (2 GiB by default), a record up to 1 MiB; no limit on the number of rows.',
];

/** Markdown, for the reference. */
export function csvFormatMarkdown(): string {
  return [
    '### The contract file (CSV)',
    '',
    ...CSV_RULES.map((r) => `- ${r}`),
    '',
    '| column | type | rules |',
    '|---|---|---|',
    ...CONTRACT_FIELDS.map((f) => `| \`${f.name}\` | ${typeOf(f)} | ${rulesOf(f)} |`),
    '',
    'Every problem of a file is reported at once in the 422 `ingest-validation-failed` document, as `{row, field, code, message}`:',
    '',
    '| code | how to fix it |',
    '|---|---|',
    ...ROW_ERROR_CODES.map((c) => `| \`${c.code}\` | ${c.fix} |`),
  ].join('\n');
}

/** HTML, for the ingest-validation-failed problem page; its example as this server (BASE_URL, ERRORS_BASE) writes it. */
export function csvFormatHtml(baseUrl: string, errorsBase: string): string {
  return `<h2>The contract file</h2>
<ul>${CSV_RULES.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>
<table><thead><tr><th>column</th><th>type</th><th>rules</th></tr></thead><tbody>
${CONTRACT_FIELDS.map((f) => `<tr><td><code>${f.name}</code></td><td>${escapeHtml(typeOf(f))}</td><td>${escapeHtml(rulesOf(f))}</td></tr>`).join('\n')}
</tbody></table>
<h2>The codes, and how to fix each</h2>
<table><thead><tr><th>code</th><th>how to fix it</th></tr></thead><tbody>
${ROW_ERROR_CODES.map((c) => `<tr><td><code>${c.code}</code></td><td>${escapeHtml(c.fix)}</td></tr>`).join('\n')}
</tbody></table>
<h2>An example</h2>
<pre>${escapeHtml(
    JSON.stringify(
      (({ errorCount: _c, errorsUrl: _u, ...answer }) => answer)(atThisServer(validationProblemExample, baseUrl, errorsBase)),
      null,
      2,
    ),
  )}</pre>
<p>Fix the rows (<code>GET …/versions/{versionId}/errors</code> with <code>Accept: text/csv</code> gives the rejected rows as a file to fix in a spreadsheet) and upload the file again, with a new Idempotency-Key.</p>`;
}
