const path = require('path');

const config = {
  port: process.env.PORT || 3000,
  env: process.env.NODE_ENV || 'development',
  paths: {
    root: path.resolve(__dirname, '..'),
  },
};

module.exports = config;
module.exports.default = config;
