const { logger } = require('./utils/logger');

class Database {
  constructor() {
    this.connection = null;
  }

  async connect() {
    logger.info('Connecting to database');
    // Connection logic
  }
}

module.exports = { db: new Database() };
