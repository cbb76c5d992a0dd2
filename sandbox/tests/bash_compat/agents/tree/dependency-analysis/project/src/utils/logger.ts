import { Config } from '../config';

export const logger = {
  info: (msg: string) => console.log(`[INFO] ${msg}`),
  debug: (msg: string) => Config.logLevel === 'debug' && console.log(`[DEBUG] ${msg}`),
  error: (msg: string) => console.error(`[ERROR] ${msg}`),
};

export function createLogger(name: string) {
  return {
    log: (msg: string) => logger.info(`[${name}] ${msg}`),
  };
}
