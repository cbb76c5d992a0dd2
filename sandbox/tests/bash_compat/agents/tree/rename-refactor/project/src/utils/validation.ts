export function validateEmail(email: string): boolean {
  return email.includes('@') && email.includes('.');
}
