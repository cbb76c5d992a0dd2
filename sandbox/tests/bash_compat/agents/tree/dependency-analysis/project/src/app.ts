import { Router } from './router';
import { Database } from './db';
import { logger } from './utils/logger';
import { Config } from './config';

export class App {
  private router: Router;
  private db: Database;

  constructor() {
    this.db = new Database(Config.dbUrl);
    this.router = new Router(this.db);
    logger.info('App initialized');
  }

  start() {
    this.router.listen(Config.port);
  }
}
