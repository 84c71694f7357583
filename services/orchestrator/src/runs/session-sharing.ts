/**
 * Whether the run's creator shared its session publicly (`config.session_sharing.public_access`, contract §2): the
 * user's decision that anyone may see what the run did. It opens the public redirect checks and lets the run publish
 * artifacts (docs/artifacts.md).
 */
export function sharedPublicly(config: unknown): boolean {
  const sharing = (config as { session_sharing?: { public_access?: string } } | null)?.session_sharing;
  return sharing?.public_access === 'VIEWER' || sharing?.public_access === 'EDITOR';
}
