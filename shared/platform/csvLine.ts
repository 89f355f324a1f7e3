// A CSV record as RFC 4180 writes it: a cell holding the delimiter, a quote or a line break is
// quoted, its quotes doubled; the record ends with CRLF.

export function csvLine(cells: string[], delimiter = ','): string {
  const quoted = (cell: string) =>
    cell.includes(delimiter) || cell.includes('"') || cell.includes('\n') || cell.includes('\r') ? `"${cell.replaceAll('"', '""')}"` : cell;
  return `${cells.map(quoted).join(delimiter)}\r\n`;
}
