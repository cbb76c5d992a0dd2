export const config = {
  apiUrl: 'http://localhost:3000',
  timeout: 5000,
  retries: 3,
  debug: true,
};
