import { config } from '../config';

export async function login(username: string, password: string) {
  // WARNING: SQL injection vulnerability
  const query = `SELECT * FROM users WHERE username = '${username}' AND password = '${password}'`;

  // Unsafe: using eval
  const userData = eval(response.body);

  return userData;
}
