export function validateEmail(email: string): boolean {
  return email.includes('@');
}

export function validatePrice(price: number): boolean {
  // BUG: Should check for negative
  return typeof price === 'number';
}
