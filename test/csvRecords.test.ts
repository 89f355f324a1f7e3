import { expect } from 'chai';
import { CsvRecords } from '../shared/ingest/csvRecords.ts';
import { csvParse, fast } from './support/csv.ts';
import { realisticCsv } from './support/realisticContracts.ts';

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
  'a,b\r\n"x"\r\ny,z\r\n"q"\r',
  'a,b\r\n"x"\ry,z\r\n',
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

  it('when files are shaped like exports (names in many scripts, quoted delimiters and quotes, every field quoted, CRLF), then it reads them as csv-parse does', () => {
    for (const shape of [{}, { quoteAll: true, crlf: true }, { crlf: true }]) {
      const text = realisticCsv(3000, shape);
      const expected = csvParse(text, ',');
      expect(expected).to.have.length(3001);
      expect(fast(text, ',')).to.deep.equal(expected);
      expect(fast(text, ',', [4093, 17, 65_536])).to.deep.equal(expected);
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

describe('the fast CSV reader: records over the cap', () => {
  const at = (text: string, cap: number) => [fast(text, ',', undefined, cap), fast(text, ',', [1], cap), fast(text, ',', [2, 5], cap)];

  it('when a record has exactly the cap in bytes, then it is read; one byte more, then it is overlong, in its place', () => {
    // 10 bytes: "é" is two, the record delimiter does not count.
    for (const rd of ['\n', '\r\n', '\r']) {
      const text = `h${rd}ab,cdé,fg${rd}ab,cdé,fgh${rd}x${rd}`;
      for (const read of at(text, 10)) expect(read, JSON.stringify(text)).to.deep.equal([['h'], ['ab', 'cdé', 'fg'], 'overlong', ['x']]);
    }
  });

  it('when an overlong record has quoted delimiters, line breaks and quotes, then the reader follows its quoting to its end and goes on', () => {
    const text = 'h\n"a,\nb""\r\n,c",d\n"e\n",f\n\ng\n';
    for (const read of at(text, 6)) expect(read).to.deep.equal([['h'], 'overlong', ['e\n', 'f'], [''], ['g']]);
  });

  it('when the file ends inside an overlong quoted value, then that record is overlong (not malformed); inside a short one, malformed', () => {
    for (const read of at('h\n"abcdefgh\nij', 6)) expect(read).to.deep.equal([['h'], 'overlong']);
    for (const read of at('h\n"ab\n', 6)) expect(read).to.deep.equal([['h'], 'malformed']);
  });

  it('when a CRLF file has a CR as data at a chunk boundary, then the bytes counted are exact', () => {
    // Record 2 is "ab\rcd": 5 bytes, the CR data (no LF after it).
    const text = 'h\r\nab\rcd\r\nx\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      for (const cap of [4, 5]) {
        const read = fast(text, ',', [cut, text.length], cap);
        expect(read, `cut at ${cut}, cap ${cap}`).to.deep.equal([['h'], cap === 5 ? ['ab\rcd'] : 'overlong', ['x']]);
      }
    }
  });

  it('when the first record is overlong, then the record delimiter is still decided by its line break', () => {
    for (const read of at('abcdefgh\r\nx\ny\r\n', 4)) expect(read).to.deep.equal(['overlong', ['x\ny']]);
  });
});

describe('the fast CSV reader: time', () => {
  it('when one chunk holds a million lines without a delimiter, or blank, then it is read in one pass (not searched to its end once a line)', () => {
    for (const line of ['x\n', '\n']) {
      let records = 0;
      const reader = new CsvRecords(',', { record: () => void records++, malformed: () => {}, overlong: () => {} });
      const started = performance.now();
      reader.push(Buffer.from(line.repeat(1_000_000)));
      reader.end();
      expect(records).to.equal(1_000_000);
      // About 50 ms; searching the rest of the chunk on every line takes minutes.
      expect(performance.now() - started, JSON.stringify(line)).to.be.below(3000);
    }
  });
});
