const express = require('express');
const { createServer } = require('./server');
const config = require('./config');

const app = express();
const server = createServer(app);

module.exports = { app, server };
