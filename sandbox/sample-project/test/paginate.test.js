const assert = require('./assert');
const { paginate } = require('../src/paginate');

const letters = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

module.exports = [
  {
    name: 'first page holds the first pageSize items',
    fn() {
      assert.deepEqual(paginate(letters, 1, 3).items, ['a', 'b', 'c']);
    },
  },
  {
    name: 'last page holds the remainder',
    fn() {
      assert.deepEqual(paginate(letters, 3, 3).items, ['g']);
    },
  },
  {
    name: 'page flags and total',
    fn() {
      const middle = paginate(letters, 2, 3);
      assert.equal(middle.totalPages, 3, 'totalPages');
      assert.equal(middle.hasNext, true, 'hasNext');
      assert.equal(middle.hasPrevious, true, 'hasPrevious');
    },
  },
  {
    name: 'out-of-range pages are clamped',
    fn() {
      assert.deepEqual(paginate(letters, 9, 3).items, ['g']);
      assert.deepEqual(paginate(letters, 0, 3).items, ['a', 'b', 'c']);
    },
  },
  {
    name: 'empty list has one empty page',
    fn() {
      const empty = paginate([], 1, 5);
      assert.deepEqual(empty.items, []);
      assert.equal(empty.totalPages, 1, 'totalPages');
    },
  },
  {
    name: 'invalid page size is rejected',
    fn() {
      assert.throws(() => paginate(letters, 1, 0), 'pageSize 0 should throw');
    },
  },
];
