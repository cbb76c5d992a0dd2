const { db } = require('../db');
const { logger } = require('../utils/logger');

class UserController {
  async getUsers(req, res) {
    logger.info('Fetching users');
    const users = await db.query('SELECT * FROM users');
    res.json(users);
  }

  async createUser(req, res) {
    logger.info('Creating user');
    const user = await db.query('INSERT INTO users');
    res.json(user);
  }
}

module.exports = { UserController };
