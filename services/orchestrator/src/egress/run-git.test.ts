describe('git on the orchestrator', () => {
  it("runs without the orchestrator's environment: no secret reaches git or what it starts", async () => {
    process.env.CONVEYOR_CANARY_SECRET = 'must-not-leak';
    try {
      // Loaded after the canary is set, as the orchestrator's environment is set before it starts.
      let git!: typeof import('./run-git').git;
      jest.isolateModules(() => {
        ({ git } = jest.requireActual<typeof import('./run-git')>('./run-git'));
      });
      // An alias starting with `!` runs a shell command: here, one that prints the environment git was given.
      const env = await git(['-c', 'alias.printenv=!env', 'printenv']);
      expect(env).toMatch(/^PATH=/m);
      expect(env).toMatch(/^GIT_CONFIG_GLOBAL=\/dev\/null$/m);
      expect(env).not.toContain('CONVEYOR_CANARY_SECRET');
      expect(env).not.toContain('must-not-leak');
    } finally {
      delete process.env.CONVEYOR_CANARY_SECRET;
    }
  });
});
