export function formatUserName(first: string, last: string): string {
  return `${first} ${last}`;
}

export function formatUserName_deprecated(name: string): string {
  return name.trim();
}

export function capitalize(str: string): string {
  return str.charAt(0).toUpperCase() + str.slice(1);
}
