// TODO: replace with a real logger
function log(message) {
  console.log(`[util] ${message}`);
}

module.exports = { log };
