import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { CsvRecords } from '../shared/ingest/csvRecords.ts';

type Read = Array<string[] | 'malformed'>;

/** What csv-parse makes of `text`, with the options the ingest used it with before the fast reader. */
function csvParse(text: string, delimiter: string): Read {
  const out: Read = [];
  parse(text, {
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    skip_records_with_error: true,
    on_record: (cells: string[]) => void out.push(cells),
    on_skip: () => void out.push('malformed'),
  });
  return out;
}

/** What the fast reader makes of `text`, fed in chunks of the given sizes (cycled). */
function fast(text: string, delimiter: string, chunkSizes: number[] = [text.length || 1]): Read {
  const out: Read = [];
  const reader = new CsvRecords(delimiter, { record: (cells) => out.push(cells), malformed: () => out.push('malformed') });
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = Math.max(1, chunkSizes[k % chunkSizes.length]!);
    reader.push(text.slice(i, i + size));
    i += size;
  }
  reader.end();
  return out;
}

const TRICKY = [
  'a,b,c\n1,2,3\n',
  'a,b,c\r\n1,2,3\r\n4,5,6',
  'a,b\n"x,y",z\n',
  'a,b\n"multi\nline",z\nnext,row\n',
  'a,b\r\n"multi\r\nline",z\r\n',
  'a,b\n"say ""hi""",z\n',
  'a,b\n"",\n',
  'a,b\n,\n\n   \n,,\n',
  'a,b\nx"y,z\n',
  'a,b\n"abc"def,z\n',
  'a,b\n"abc" ,z\n',
  'a,b\n"unclosed,z\nmore\n',
  'a,b\n"unclosed at the end',
  'a,b\n"x"\n',
  'a,b\n""""\n',
  'a,b\nx,"y"',
  'a,b\nx,y\n\n',
  'a,b\r\nx\ny,z\r\n',
  'a,b\nx\ry,z\n',
  'a,b\rx,y\r"q\r",z\r',
  '"a","b"\n"1","2"\n',
  '"a\nb",c\n1,2\n',
  'a;b;c\n1;"2;3";4\n',
  'a\tb\n"x\ty"\tz\n',
  'a,b\n  x  ,  "y"  \n',
  'a,b\n"a""b""",c\n',
  'a,b\n"x""\n',
  'a,b\n\n',
  '\n\na,b\n',
  'a,b\n"é",ü€\n',
];

describe('the fast CSV reader, against csv-parse', () => {
  it('when inputs are tricky (quotes, delimiters and line breaks in cells, CRLF, blank lines, bad quoting), then it reads them as csv-parse does', () => {
    for (const text of TRICKY) {
      for (const delimiter of [',', ';', '\t']) {
        const expected = csvParse(text, delimiter);
        expect(fast(text, delimiter), JSON.stringify(text)).to.deep.equal(expected);
        for (const sizes of [[1], [2], [3, 1], [5, 7, 2]]) {
          expect(fast(text, delimiter, sizes), `${JSON.stringify(text)} in chunks of ${sizes}`).to.deep.equal(expected);
        }
      }
    }
  });

  it('when inputs are random mixes of quotes, delimiters, line breaks and text, then it reads them as csv-parse does', () => {
    let seed = 42;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const pieces = ['"', '""', ',', ';', '\n', '\r\n', '\r', 'a', 'bc', ' ', 'é', '\t', 'x"y'];
    for (let n = 0; n < 3000; n++) {
      let text = '';
      const length = Math.floor(random() * 30);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(random() * pieces.length)];
      const delimiter = [',', ';', '\t'][n % 3]!;
      const expected = csvParse(text, delimiter);
      expect(fast(text, delimiter), JSON.stringify(text)).to.deep.equal(expected);
      const sizes = [1 + Math.floor(random() * 5), 1 + Math.floor(random() * 5)];
      expect(fast(text, delimiter, sizes), `${JSON.stringify(text)} in chunks of ${sizes}`).to.deep.equal(expected);
    }
  });
});
