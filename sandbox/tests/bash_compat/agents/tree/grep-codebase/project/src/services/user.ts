import { Database } from '../db';
import { Logger } from '../utils/logger';

// User service handles user CRUD operations
export class UserService {
  private db: Database;
  private logger: Logger;

  constructor() {
    this.db = new Database();
    this.logger = new Logger();
  }

  // TODO: Add caching
  async getUser(id: string) {
    this.logger.debug(`Fetching user ${id}`);
    return this.db.query('SELECT * FROM users WHERE id = ?', [id]);
  }

  async createUser(data: UserData) {
    // FIXME: Validate input
    return this.db.insert('users', data);
  }
}

interface UserData {
  name: string;
  email: string;
}
