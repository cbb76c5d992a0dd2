export class Database {
  connect() {}
  query() {}
}
