import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** Starts one of the bare baseline servers (bare-http-server, bare-express-server) in its own process. */
export async function startBaseline(
  script: 'bare-http-server' | 'bare-express-server',
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; stop: () => void }> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, `${script}.js`)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
  });
  child.removeAllListeners('exit');
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}
