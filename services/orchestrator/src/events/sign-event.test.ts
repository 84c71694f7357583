import { Webhook } from 'standardwebhooks';
import { newEndpointSecret } from './endpoint-secret';
import { signEvent, signingKey } from './sign-event';

describe('signEvent', () => {
  it('signs so the standardwebhooks package verifies with either secret, and matches its own signature', () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const body = '{"type":"run.succeeded","timestamp":"2026-11-26T01:00:00.000Z","data":{"title":"ü"}}';
    const at = new Date();
    const headers = signEvent('msg_1', body, [signingKey(current), signingKey(previous)], at);
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, headers)).toBeTruthy();
    expect(headers['webhook-signature']!.split(' ')[0]).toBe(new Webhook(current).sign('msg_1', at, body));
  });
});
