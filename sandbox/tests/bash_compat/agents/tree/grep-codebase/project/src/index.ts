import { UserService } from './services/user';
import { AuthService } from './services/auth';
import { Logger } from './utils/logger';

// TODO: Add error handling
export async function main() {
  const logger = new Logger();
  const userService = new UserService();
  const authService = new AuthService();

  // FIXME: This should be configurable
  const port = 3000;

  logger.info('Starting application...');
  // TODO: Implement graceful shutdown
}
