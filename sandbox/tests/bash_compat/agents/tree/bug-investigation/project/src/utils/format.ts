export function formatPrice(price: number): string {
  return '$' + price.toFixed(2);
}

export function formatDate(date: Date): string {
  return date.toISOString().split('T')[0];
}

export function formatPercent(value: number): string {
  // BUG: Should multiply by 100
  return value.toFixed(1) + '%';
}
