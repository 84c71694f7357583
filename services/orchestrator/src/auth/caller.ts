/**
 * Who a request acts for, as the gateway authenticated it (an API key or a console session). The domain's own type:
 * `grpc/require-caller.ts` reads it off the wire, `auth-service.ts` makes it from a key.
 */
export interface Caller {
  team_id: string;
  /** `USER` or `AGENT`. */
  principal_type: string;
  principal_id: string;
  /** The user's team role; `MEMBER` for agents. */
  role: string;
  /** The key the request came with; empty for a console session. */
  api_key_id: string;
  /** Set when the key is a run's own (run-scoped) key. */
  run_id: string;
  display_name: string;
  email: string;
}
