// `npm start`'s process supervisor (written by hand: pm2, the usual library, brings a daemon and a ~/.pm2 home shared
// by every installation on the machine). Each service runs in its own process group, so a Ctrl-C in the terminal
// reaches only start.sh, which stops this supervisor, which stops the services.
//
// - A service that exits on its own is restarted after a capped exponential delay (1 s, 2 s, 4 s … 30 s); the
//   others keep running. A run of at least STABLE_MS resets the delay.
// - A service that exits CRASH_LOOP_EXITS times in a row, each time within STABLE_MS of starting, is reported as
//   crash-looping, and still retried every 30 s: a dependency may come back.
// - SIGTERM/SIGINT: no more restarts; every service gets SIGTERM, SIGKILL after STOP_GRACE_MS; then exit 0.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;
const STABLE_MS = 30_000;
const CRASH_LOOP_EXITS = 5;
const STOP_GRACE_MS = 30_000;
const READY_TIMEOUT_MS = 60_000;

const log = (message) => process.stderr.write(`\x1b[1;35m[supervisor]\x1b[0m ${message}\n`);
const seconds = (ms) => `${Math.round(ms / 100) / 10}s`;

/** The restart delay after `failures` consecutive short-lived runs (1-based). */
const restartDelay = (failures) => Math.min(FIRST_DELAY_MS * 2 ** (failures - 1), MAX_DELAY_MS);

async function waitReady(url, child) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

/**
 * services: [{ name, entry (a Node script), env, readyUrl?, awaitReady? (start the next one only once it is ready) }]
 * dirs: { logDir (<name>.log, appended across restarts), runDir (<name>.pid while it runs) }
 */
async function supervise(services, { logDir, runDir }) {
  fs.mkdirSync(logDir, { recursive: true });
  fs.mkdirSync(runDir, { recursive: true });
  const state = new Map(services.map((s) => [s.name, { child: undefined, failures: 0, timer: undefined }]));
  let stopping = false;

  const start = (service) => {
    const s = state.get(service.name);
    const logFile = fs.createWriteStream(path.join(logDir, `${service.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [service.entry], {
      env: service.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const startedAt = Date.now();
    s.child = child;
    fs.writeFileSync(path.join(runDir, `${service.name}.pid`), `${child.pid}\n`);
    let open = 2;
    for (const stream of [child.stdout, child.stderr]) {
      readline
        .createInterface({ input: stream, crlfDelay: Infinity })
        .on('line', (line) => {
          logFile.write(`${line}\n`);
          process.stderr.write(`[${service.name}] ${line}\n`);
        })
        .on('close', () => --open === 0 && logFile.end());
    }
    child.on('exit', (code, signal) => {
      s.child = undefined;
      fs.rmSync(path.join(runDir, `${service.name}.pid`), { force: true });
      if (stopping) return;
      const ranFor = Date.now() - startedAt;
      s.failures = ranFor >= STABLE_MS ? 1 : s.failures + 1;
      const delay = restartDelay(s.failures);
      const how = signal ? `signal ${signal}` : `code ${code}`;
      log(`${service.name} exited (${how}) after ${seconds(ranFor)}; restarting in ${seconds(delay)}`);
      if (s.failures >= CRASH_LOOP_EXITS)
        log(
          `${service.name} is CRASH-LOOPING: ${s.failures} exits in a row, each within ${seconds(STABLE_MS)} of ` +
            `starting; the other services keep running; see ${path.join(logDir, `${service.name}.log`)}`,
        );
      s.timer = setTimeout(() => {
        s.timer = undefined;
        if (!stopping) start(service);
      }, delay);
    });
    return child;
  };

  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping the services`);
    const exits = [];
    for (const [name, s] of state) {
      clearTimeout(s.timer);
      const child = s.child;
      if (!child) continue;
      exits.push(
        new Promise((resolve) => {
          const kill = setTimeout(() => {
            log(`${name} still running after ${seconds(STOP_GRACE_MS)}; SIGKILL`);
            child.kill('SIGKILL');
          }, STOP_GRACE_MS);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
        }),
      );
      child.kill('SIGTERM');
    }
    await Promise.all(exits);
    log('services stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Should this process itself fail, its services must not outlive it unsupervised.
  process.on('exit', () => {
    for (const s of state.values()) s.child?.kill('SIGTERM');
  });

  for (const service of services) {
    if (stopping) return;
    const child = start(service);
    if (service.awaitReady && !(await waitReady(service.readyUrl, child)))
      log(`${service.name} not ready at ${service.readyUrl}; starting the others anyway`);
  }
}

module.exports = { supervise };
