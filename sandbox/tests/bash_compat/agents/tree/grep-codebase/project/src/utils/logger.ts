export class Logger {
  info(msg: string) { console.log('[INFO]', msg); }
  debug(msg: string) { console.log('[DEBUG]', msg); }
  error(msg: string) { console.error('[ERROR]', msg); }
  warn(msg: string) { console.warn('[WARN]', msg); }
}
