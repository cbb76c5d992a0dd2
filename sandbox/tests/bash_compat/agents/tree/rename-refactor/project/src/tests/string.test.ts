import { formatUserName, capitalize } from '../utils/string';

describe('formatUserName', () => {
  it('formats full name', () => {
    expect(formatUserName('John', 'Doe')).toBe('John Doe');
  });
});

describe('capitalize', () => {
  it('capitalizes first letter', () => {
    expect(capitalize('hello')).toBe('Hello');
  });
});
