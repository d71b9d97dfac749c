// The shared-value table behind the node cache's and the static provider's interning (interner()
// is sharedValues with the string as its own key; string identity is not observable in JS).
import { describe, expect, it } from 'vitest';
import { sharedValues } from '../../src/util/intern.js';

describe('sharedValues', () => {
  it('answers the first value stored under a key, and makes one only on a miss', () => {
    const shared = sharedValues<object>();
    let made = 0;
    const make = () => (made++, { n: made });
    const a = shared('k', make);
    expect(shared('k', make)).toBe(a);
    expect(shared('other', make)).not.toBe(a);
    expect(made).toBe(2);
  });

  it('past its bound stores nothing more, and passes new values through', () => {
    const shared = sharedValues<object>(1);
    const first = shared('a', () => ({}));
    const b1 = shared('b', () => ({}));
    expect(shared('b', () => ({}))).not.toBe(b1);
    expect(shared('a', () => ({}))).toBe(first);
  });
});
