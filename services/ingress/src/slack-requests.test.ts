import { parseSlackBody, urlVerificationChallenge } from './slack-requests';

describe('Slack requests at the ingress', () => {
  it("passes a slash command's form on as the JSON object of its fields", () => {
    const raw = Buffer.from('command=%2Fconveyor&text=fix+the+build&user_id=U1&channel_id=C1');
    const { json, body } = parseSlackBody('application/x-www-form-urlencoded; charset=utf-8', raw);
    const fields = { command: '/conveyor', text: 'fix the build', user_id: 'U1', channel_id: 'C1' };
    expect(json).toEqual(fields);
    expect(JSON.parse(body.toString('utf8'))).toEqual(fields);
  });

  it('keeps an Events API body as it came, and refuses one that is neither JSON nor a form', () => {
    const raw = Buffer.from('{"type":"event_callback","event_id":"Ev1"}');
    expect(parseSlackBody('application/json', raw)).toEqual({ json: JSON.parse(raw.toString()), body: raw });
    expect(() => parseSlackBody('application/json', Buffer.from('text=x'))).toThrow();
    expect(() => parseSlackBody('application/x-www-form-urlencoded', Buffer.from([0xff, 0xfe]))).toThrow();
  });

  it('finds the challenge of a url_verification request only', () => {
    expect(urlVerificationChallenge({ type: 'url_verification', challenge: 'c1' })).toBe('c1');
    expect(urlVerificationChallenge({ type: 'event_callback', challenge: 'c1' })).toBeUndefined();
    expect(urlVerificationChallenge(null)).toBeUndefined();
  });
});
