import { validateEmail, validatePrice } from '../src/utils/validate';

test('validateEmail works', () => {
  expect(validateEmail('test@example.com')).toBe(true);
});

test('validatePrice works', () => {
  expect(validatePrice(10)).toBe(true);
  // Missing test for negative prices!
});
