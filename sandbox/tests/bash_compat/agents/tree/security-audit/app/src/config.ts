export const config = {
  apiKey: 'sk-1234567890abcdef',
  dbPassword: 'super_secret_password',
  jwtSecret: 'my-jwt-secret-key',
  port: 3000,
};
