const { add, mean } = require('./lib/math');
const util = require('./util');

function main(args) {
  const numbers = args.map(Number);
  console.log('sum', add(...numbers));
  console.log('mean', mean(numbers));
  util.log('done');
}

main(process.argv.slice(2));
