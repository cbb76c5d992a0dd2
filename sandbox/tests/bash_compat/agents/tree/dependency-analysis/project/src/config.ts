export const Config = {
  port: 3000,
  dbUrl: 'postgresql://localhost:5432/app',
  logLevel: 'info',
};

export const FeatureFlags = {
  newDashboard: true,
  darkMode: false,
};

export function getEnv(key: string): string | undefined {
  return process.env[key];
}
