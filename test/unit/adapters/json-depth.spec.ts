import { nestsDeeperThan } from '../../../src/adapters/http/middleware';

const deeper = (text: string, max: number) => nestsDeeperThan(Buffer.from(text), max);

describe('nestsDeeperThan', () => {
  it('counts nested objects and arrays', () => {
    expect(deeper('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(deeper('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(deeper('[[],[],[]]', 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(deeper('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(deeper('{"a":"\\"[[[[\\"","b":"\\\\"}', 1)).toBe(false);
    expect(deeper('{"a":"\\\\",  "b":[[1]]}', 2)).toBe(true);
  });

  it('scans 60 KB of brackets without recursion', () => {
    expect(deeper('['.repeat(30_000) + ']'.repeat(30_000), 32)).toBe(true);
  });
});
