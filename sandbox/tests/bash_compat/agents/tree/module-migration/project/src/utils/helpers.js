const _ = require('lodash');

const formatDate = (date) => date.toISOString();
const slugify = (str) => _.kebabCase(str);

module.exports = { formatDate, slugify };
