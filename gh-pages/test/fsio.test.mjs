import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../lib/fsio.mjs';

test('writes the JSON into new folders and leaves no temp file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fsio-'));
  try {
    const path = join(dir, 'derived', 'trend', 'x.json');
    writeJsonAtomic(path, { a: [1, 2] });
    writeJsonAtomic(path, { a: [3] });
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { a: [3] });
    assert.deepEqual(readdirSync(join(dir, 'derived', 'trend')), ['x.json']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed rename throws, removes the temp file and leaves what was there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fsio-'));
  try {
    const target = join(dir, 'taken');
    mkdirSync(target); // a folder with an entry cannot be replaced by a file
    writeFileSync(join(target, 'keep'), 'old');
    assert.throws(() => writeJsonAtomic(target, { a: 1 }), /EISDIR|ENOTEMPTY|EEXIST/);
    assert.deepEqual(readdirSync(dir), ['taken']);
    assert.equal(readFileSync(join(target, 'keep'), 'utf8'), 'old');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
