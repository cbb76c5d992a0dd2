import { App } from './app';
import { logger } from './utils/logger';

logger.info('Starting application');
const app = new App();
app.start();
