// The export formats, each defined once: its name (the API's `format`), the download's content
// type and file extension, how the API reference describes it, and the COPY … TO STDOUT that
// writes a version's rows in it: the contract's fields in the contract's order
// (shared/contract/fields.ts). A new format is one entry here: the API accepts it and documents
// it, the worker builds it, downloads are typed and named by it; the database does not list the
// formats (sql/007_export_formats.sql).
import { CONTRACT_FIELDS } from '../contract/fields.ts';
import { copyJsonLinesOut } from '../platform/db.ts';
import { fieldText, rowJson } from './contractRows.ts';

export type ExportFormatSpec = {
  /** The download's Content-Type. */
  contentType: string;
  /** The download's file name is the export's id with this extension. */
  extension: string;
  /** How the API reference names the format when an export is requested. */
  described: string;
  /** The COPY … TO STDOUT statement writing the rows `rows` selects (`FROM … ORDER BY …`). */
  copySql(rows: string): string;
};

export const EXPORT_FORMATS = {
  csv: {
    contentType: 'text/csv; charset=utf-8',
    extension: 'csv',
    described: "CSV (the contract's columns, in order: uploading it again gives the same metrics and catalog)",
    copySql: (rows: string) =>
      `COPY (SELECT ${CONTRACT_FIELDS.map((f) => `${fieldText(f)} AS "${f.name}"`).join(', ')} ${rows}) TO STDOUT WITH (FORMAT csv, HEADER)`,
  },
  jsonl: {
    // One object a line, every field present (absent values as null), the amount as a decimal string.
    contentType: 'application/jsonl; charset=utf-8',
    extension: 'jsonl',
    described: 'JSONL',
    copySql: (rows: string) => copyJsonLinesOut(`SELECT ${rowJson()} ${rows}`),
  },
} as const satisfies Record<string, ExportFormatSpec>;

export type ExportFormat = keyof typeof EXPORT_FORMATS;
export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as [ExportFormat, ...ExportFormat[]];

/** The format of an export; throws for a name the table no longer has (an export stored before its format was removed). */
export function exportFormat(name: ExportFormat): ExportFormatSpec {
  if (!Object.hasOwn(EXPORT_FORMATS, name)) throw new Error(`unknown export format ${JSON.stringify(name)}`);
  return EXPORT_FORMATS[name];
}

/** The media type of a format's downloads, without parameters (text/csv). */
export const mediaType = (format: ExportFormat) => EXPORT_FORMATS[format].contentType.split(';')[0]!;
