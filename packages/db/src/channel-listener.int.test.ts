import { createLogger } from '@conveyor/logger';
import { ChannelListener } from './channel-listener';
import { createScratchDatabase, withClient, type ScratchDatabase } from './test-support/scratch-database';

// The LISTEN connection behind the auth epochs (docs/service-trust.md): notifications reach the handler, and a
// dropped connection comes back and catches up (onListening) again, since what was sent meanwhile is lost.
describe('ChannelListener', () => {
  let db: ScratchDatabase;
  let listener: ChannelListener | undefined;

  beforeAll(async () => {
    db = await createScratchDatabase('listener');
  });

  afterAll(async () => {
    await listener?.stop();
    await db?.drop();
  });

  it('delivers notifications and catches up after its connection is killed', async () => {
    const payloads: string[] = [];
    let listening = 0;
    let onListening: () => void = () => undefined;
    let onPayload: () => void = () => undefined;
    listener = new ChannelListener({
      databaseUrl: db.url,
      channel: 'probe',
      onNotification: (payload) => {
        payloads.push(payload);
        onPayload();
      },
      onListening: () => {
        listening += 1;
        onListening();
        return Promise.resolve();
      },
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    await listener.start();
    expect(listening).toBe(1);
    expect(listener.connected).toBe(true);

    const notify = (payload: string) =>
      withClient(db.url, async (c) => {
        const delivered = new Promise<void>((resolve) => (onPayload = resolve));
        await c.query(`SELECT pg_notify('probe', $1)`, [payload]);
        await delivered;
      });
    await notify('team-1');

    const back = new Promise<void>((resolve) => (onListening = resolve));
    await withClient(db.url, (c) =>
      c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN probe'`,
        [db.name],
      ),
    );
    await back;
    expect(listening).toBe(2);
    await notify('team-2');
    expect(payloads).toEqual(['team-1', 'team-2']);
  });
});
