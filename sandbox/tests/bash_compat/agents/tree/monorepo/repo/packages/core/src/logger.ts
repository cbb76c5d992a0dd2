export class Logger {
  info(msg: string) {}
  error(msg: string) {}
}
