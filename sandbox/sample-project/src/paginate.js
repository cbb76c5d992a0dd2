// Splits a list into pages for the dashboard's tables. Pages are numbered from 1; a page
// outside the range is clamped to the first or last page.

function paginate(items, page, pageSize) {
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new RangeError('pageSize must be a positive integer');
  }
  const totalPages = Math.max(1, Math.ceil(items.length / pageSize));
  const current = Math.min(Math.max(page, 1), totalPages);
  const start = current * pageSize;
  return {
    items: items.slice(start, start + pageSize),
    page: current,
    totalPages,
    hasNext: current < totalPages,
    hasPrevious: current > 1,
  };
}

module.exports = { paginate };
