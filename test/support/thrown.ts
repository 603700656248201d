import { expect } from 'vitest';

/**
 * What `fn` throws, checked to be a `type` (the check fails the test otherwise); a test whose
 * `fn` throws nothing fails, naming the class it expected.
 */
export function thrown<E extends Error>(
  fn: () => unknown,
  type: abstract new (...args: never[]) => E,
): E {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error(`expected ${type.name} to be thrown, but nothing was`);
}
