import { Database } from './db';
import { UserController } from './controllers/user';
import { PostController } from './controllers/post';
import { logger } from './utils/logger';

export class Router {
  constructor(private db: Database) {
    logger.debug('Router created');
  }

  listen(port: number) {
    logger.info(`Listening on port ${port}`);
  }
}
