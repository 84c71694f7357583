import { evaluateFilter } from './evaluate-filter';

describe('evaluateFilter', () => {
  it('matches every delivery when there is no filter', () => {
    expect(evaluateFilter(undefined, { a: 1 })).toEqual({ matched: true, mismatches: [] });
    expect(evaluateFilter(null, 'anything')).toEqual({ matched: true, mismatches: [] });
  });

  it('parses and matches a valid filter', () => {
    expect(evaluateFilter({ action: ['opened'] }, { action: 'opened' })).toEqual({
      matched: true,
      mismatches: [],
    });
    expect(evaluateFilter({ action: ['opened'] }, { action: 'closed' })).toEqual({
      matched: false,
      mismatches: ['payload.action: "closed" is not an allowed value'],
    });
  });

  it('fails closed on an invalid filter and says why', () => {
    expect(evaluateFilter({ action: 'opened', n: { in: [] } }, { action: 'opened' })).toEqual({
      matched: false,
      mismatches: [],
      error:
        'invalid payload filter: filter.payload.action: must be an array of allowed values or an object ' +
        '(operators "in", "not_in", "exists", or nested fields); filter.payload.n.in: must list at least one value',
    });
    expect(evaluateFilter([], {})).toMatchObject({
      matched: false,
      error: expect.stringContaining('must be an object'),
    });
  });
});
