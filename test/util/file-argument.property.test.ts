// The file-argument reader and the command suggester, over random inputs: a file's text comes back
// unchanged exactly when it holds something; every refusal is one line that starts with the flag
// and the path; a one-letter slip of a command always finds a command that close.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkOutputFile, readFileArgument } from '../../src/util/file-argument.js';
import { editDistance, nearest } from '../../src/cli/suggest.js';

const dir = mkdtempSync(path.join(tmpdir(), 'file-argument-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readFileArgument', () => {
  it('returns the text unchanged when it holds a non-blank character, else one line naming flag and path', () => {
    const file = path.join(dir, 'f.txt');
    const text = fc.oneof(fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r') }), fc.string({ unit: 'grapheme' }));
    fc.assert(
      fc.property(text, (content) => {
        writeFileSync(file, content);
        if (content.trim() !== '') {
          expect(readFileArgument('--node', file, { expected: 'a Node' })).toBe(content);
        } else {
          expect(() => readFileArgument('--node', file, { expected: 'a Node' })).toThrow(`--node ${file}: the file is empty; expected a Node`);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a path that is missing, a folder, or under a file: one line, the flag and the path first, no errno text', () => {
    writeFileSync(path.join(dir, 'plain'), 'x');
    const paths = fc.constantFrom(path.join(dir, 'nope'), dir, path.join(dir, 'plain', 'child'), path.join(dir, 'nope', 'deeper'));
    fc.assert(
      fc.property(paths, fc.constantFrom('--kubeconfig', '--faults', '--nodes-file'), (p, flag) => {
        let message = '';
        try {
          readFileArgument(flag, p, { expected: 'x' });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message.startsWith(`${flag} ${p}: cannot read: `)).toBe(true);
        expect(message).not.toMatch(/\n|E[A-Z]{3,}/);
        // An output path under the same conditions is refused as a write, or accepted when its folder exists.
        if (p === dir) expect(() => checkOutputFile(flag, p)).toThrow(`${flag} ${p}: it is a directory, not a file`);
      }),
    );
  });
});

describe('nearest command', () => {
  const COMMANDS = ['explain', 'apiserver', 'plan', 'run', 'simulate', 'audit'];
  const slip = (word: string) =>
    fc.tuple(fc.nat({ max: word.length - 1 }), fc.constantFrom('delete', 'insert', 'substitute', 'swap'), fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'))
      .map(([i, kind, ch]) => {
        if (kind === 'delete') return word.slice(0, i) + word.slice(i + 1);
        if (kind === 'insert') return word.slice(0, i) + ch + word.slice(i);
        if (kind === 'substitute') return word.slice(0, i) + ch + word.slice(i + 1);
        return i + 1 < word.length ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2) : word;
      });

  it('one slip of a command of four or more letters always gets a suggestion no farther than the command itself', () => {
    const long = COMMANDS.filter((c) => c.length >= 4);
    fc.assert(
      fc.property(fc.constantFrom(...long).chain((c) => fc.tuple(fc.constant(c), slip(c))), ([command, typed]) => {
        const guess = nearest(typed, COMMANDS);
        expect(guess).toBeDefined();
        expect(editDistance(typed, guess as string)).toBeLessThanOrEqual(editDistance(typed, command));
      }),
      { numRuns: 500 },
    );
  });

  it('editDistance is a distance: zero only for equal words, symmetric, one per edit', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
        expect(editDistance(a, b) === 0).toBe(a === b);
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, a + 'x')).toBe(1);
      }),
    );
  });

  it('a word far from every command gets none', () => {
    expect(nearest('frobnicate', COMMANDS)).toBeUndefined();
    expect(nearest('xyz', COMMANDS)).toBeUndefined();
  });
});
