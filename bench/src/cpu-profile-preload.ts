import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

/**
 * Loaded into each service with NODE_OPTIONS=--require (Node refuses --cpu-prof there): profiles the whole process
 * with the V8 sampler and writes `<service>-<pid>.cpuprofile` to BENCH_CPU_PROF_DIR when it exits. The inspector
 * session is on the main thread, so its messages are answered synchronously, even inside the exit handler.
 */
const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // SIGUSR2 starts the profile afresh: a benchmark sends it when its measured phase begins, so start-up is left out.
  process.on('SIGUSR2', () => {
    session.post('Profiler.stop', () => session.post('Profiler.start'));
  });
  process.once('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err) return;
      const name = path.basename(path.dirname(path.dirname(process.argv[1] ?? 'node')));
      writeFileSync(path.join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
