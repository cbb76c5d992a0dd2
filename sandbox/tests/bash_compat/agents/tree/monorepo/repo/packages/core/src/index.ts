export { Database } from './db';
export { Logger } from './logger';
