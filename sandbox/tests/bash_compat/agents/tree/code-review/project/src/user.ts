// TODO: Add validation
export function createUser(data: any) {
  return { id: 1, ...data };
}
