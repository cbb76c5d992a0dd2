import { logger } from './utils/logger';
import { Config } from './config';

export class Database {
  constructor(private url: string) {
    logger.info(`Connecting to ${url}`);
  }

  query(sql: string) {
    return [];
  }
}

export function createConnection() {
  return new Database(Config.dbUrl);
}
