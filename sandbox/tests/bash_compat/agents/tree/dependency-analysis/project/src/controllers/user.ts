import { Database } from '../db';
import { logger } from '../utils/logger';
import { formatDate } from '../utils/helpers';

export class UserController {
  constructor(private db: Database) {}

  getUser(id: string) {
    logger.info(`Getting user ${id}`);
    return this.db.query(`SELECT * FROM users WHERE id = ${id}`);
  }
}
