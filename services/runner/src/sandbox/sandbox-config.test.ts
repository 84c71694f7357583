import { sandboxEnv } from './sandbox-config';

describe('SANDBOX_K8S_WARM_PODS', () => {
  const parse = (value: string) => sandboxEnv.SANDBOX_K8S_WARM_PODS.safeParse(value);

  it('reads image=floor:ceiling per image, the image keeping its own colons', () => {
    const parsed = parse('node:20-bookworm-slim=1:4,registry.example:5000/env@sha256:ab=0:2');
    expect(parsed.success && [...parsed.data]).toEqual([
      ['node:20-bookworm-slim', { floor: 1, ceiling: 4 }],
      ['registry.example:5000/env@sha256:ab', { floor: 0, ceiling: 2 }],
    ]);
    expect(parse('').success && parse('').data?.size).toBe(0);
  });

  it.each(['node:20', '=1:2', 'node:20=2:1', 'node:20=1', 'node:20=a:b'])('refuses %j', (value) => {
    const parsed = parse(value);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/is not image=floor:ceiling/);
  });
});
