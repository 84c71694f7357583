import { AppError } from '@conveyor/errors';
import { parseEnvironmentBody } from './environment-input';

const refusal = (json: string): AppError => {
  try {
    parseEnvironmentBody(json);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('accepted');
};

describe('parseEnvironmentBody', () => {
  it('refuses what the gateway refuses: unknown keys, paths outside the workspace, addresses as egress hosts', () => {
    expect(refusal('{"name":"e","allowed_host":["x.dev"]}')).toMatchObject({
      code: 'invalid_request',
      message: "body: Unrecognized key(s) in object: 'allowed_host'",
    });
    expect(refusal('{"repositories":[{"url":"u","directory":"../up"}]}').message).toBe(
      'repositories.0.directory: must be a relative path inside the workspace',
    );
    expect(refusal('{"allowed_hosts":["127.0.0.1"]}').code).toBe('invalid_request');
    expect(refusal('not json').message).toBe('body must be JSON');
  });

  it('reads an empty body as no changes', () => {
    expect(parseEnvironmentBody('')).toEqual({});
  });
});
