// The CSV writer against RFC 4180: quoting only where §2 requires it, doubled quotes, CRLF records,
// and a round trip through an independent reader for any text (fast-check).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { csvField, toCsv } from '../../src/core/index.ts';

/** A reader written from RFC 4180 §2's grammar, independent of the writer. */
function readCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        field += ch;
        i++;
      }
    } else if (ch === '"') {
      quoted = true;
      i++;
    } else if (ch === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      field += ch;
      i++;
    }
  }
  return records;
}

test('fields are quoted only when they hold a comma, a quote, CR or LF', () => {
  assert.equal(csvField('plain text'), 'plain text');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(csvField('cr\r'), '"cr\r"');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(Number.NaN), '');
  assert.equal(csvField(4.066000000000001), '4.066');
  assert.equal(csvField(1234567.25), '1234567.25');
  assert.equal(toCsv(['a', 'b'], [[1, 'x,y']]), 'a,b\r\n1,"x,y"\r\n');
});

test('any text survives a round trip through an RFC 4180 reader', () => {
  fc.assert(
    fc.property(fc.array(fc.array(fc.string(), { minLength: 2, maxLength: 2 }), { maxLength: 5 }), (rows) => {
      assert.deepEqual(readCsv(toCsv(['x', 'y'], rows)), [['x', 'y'], ...rows]);
    }),
  );
});
