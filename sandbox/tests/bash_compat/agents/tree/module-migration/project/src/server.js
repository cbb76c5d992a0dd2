const http = require('http');
const { logger } = require('./utils/logger');

function createServer(app) {
  const server = http.createServer(app);
  logger.info('Server created');
  return server;
}

module.exports = { createServer };
