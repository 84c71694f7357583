import { forwardedQuery } from './forwarded-query';
import { PROTOCOLS } from './provider-protocols';

const forward = (provider: keyof typeof PROTOCOLS, search: string) =>
  forwardedQuery(PROTOCOLS[provider], new URL(`http://proxy/x${search}`).searchParams);

describe('the query string the model proxy forwards with the real key', () => {
  it("keeps what the CLIs send: Claude Code's beta=true, Gemini's alt=sse, nothing for OpenAI", () => {
    expect(forward('anthropic', '?beta=true')).toEqual({ search: '?beta=true' });
    expect(forward('gemini', '?alt=sse')).toEqual({ search: '?alt=sse' });
    expect(forward('openai', '')).toEqual({ search: '' });
  });

  it("drops Gemini's key parameter (the run's token) and forwards the rest rebuilt, whatever its encoding", () => {
    expect(forward('gemini', '?alt=sse&key=cvr_token')).toEqual({ search: '?alt=sse' });
    expect(forward('gemini', '?%61lt=%73se&%6Bey=cvr_token')).toEqual({ search: '?alt=sse' });
    expect(forward('gemini', '?alt=sse&')).toEqual({ search: '?alt=sse' });
  });

  it.each([
    ['anthropic', '?beta=true&foo=1', /"foo" is not one/],
    ['anthropic', '?beta=false', /"beta" is not one/],
    ['anthropic', '?key=sk-other', /"key" is not one/],
    ['openai', '?api-version=2024-01-01', /"api-version" is not one.*allowed: none/],
    ['gemini', '?alt=media', /"alt" is not one/],
    ['gemini', '?alt=sse&alt=json', /"alt" is repeated/],
    ['gemini', '?key=cvr_a&key=AIza-other', /"key" is repeated/],
    ['gemini', '?%24alt=media', /"\$alt" is not one/],
    ['gemini', '?uploadType=resumable', /"uploadType" is not one/],
    ['gemini', '?constructor=x', /"constructor" is not one/],
    ['gemini', '?alt=sse;upload=1', /"alt" is not one/],
    ['gemini', '?ALT=sse', /"ALT" is not one/],
    ['gemini', '?=sse', /"" is not one/],
    ['gemini', '?alt=sse&alt', /"alt" is repeated/],
  ])('refuses %s %s', (provider, search, reason) => {
    const result = forward(provider as keyof typeof PROTOCOLS, search);
    expect(result).toEqual({ refused: expect.stringMatching(reason) });
  });
});
