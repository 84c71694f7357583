import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './installation';

const SUPERVISOR = path.resolve(__dirname, '../../../scripts/lib/supervisor.js');

describe("npm start's supervisor (scripts/lib/supervisor.js)", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'conveyor-supervisor-'));
    await writeFile(path.join(dir, 'crasher.js'), 'console.error("cannot start"); process.exit(3);\n');
    await writeFile(
      path.join(dir, 'steady.js'),
      'process.on("SIGTERM", () => { console.log("steady: SIGTERM"); process.exit(0); }); setInterval(() => {}, 1000);\n',
    );
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('restarts a crash-looping service with growing delays, reports it, keeps the others running, and stops them all on SIGTERM', async () => {
    const services = ['crasher', 'steady'].map((name) => ({
      name,
      entry: path.join(dir, `${name}.js`),
      env: { PATH: process.env.PATH },
    }));
    const supervisor = spawn(process.execPath, [
      '-e',
      `require(${JSON.stringify(SUPERVISOR)}).supervise(${JSON.stringify(services)}, ${JSON.stringify({
        logDir: path.join(dir, 'logs'),
        runDir: path.join(dir, 'run'),
      })})`,
    ]);
    let output = '';
    supervisor.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => supervisor.once('exit', resolve));

    await eventually('the crash loop to be reported', async () => output.includes('CRASH-LOOPING'), 60_000);
    const restarts = [...output.matchAll(/crasher exited \(code 3\) after \S+; restarting in (\S+)/g)].map(
      (m) => m[1],
    );
    expect(restarts.slice(0, 5)).toEqual(['1s', '2s', '4s', '8s', '16s']);
    expect(output).toContain('crasher is CRASH-LOOPING: 5 exits in a row');
    expect(await readFile(path.join(dir, 'logs/crasher.log'), 'utf8')).toContain('cannot start');

    // The steady service was started once and is still running.
    expect(output).not.toMatch(/steady exited/);
    const steadyPid = Number(await readFile(path.join(dir, 'run/steady.pid'), 'utf8'));
    expect(() => process.kill(steadyPid, 0)).not.toThrow();

    supervisor.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('[steady] steady: SIGTERM');
    expect(() => process.kill(steadyPid, 0)).toThrow();
  });
});
