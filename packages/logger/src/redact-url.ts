/** Path segments that are credentials: signed download tokens (`/blobs/{token}`) and webhook url_tokens. */
const CREDENTIAL_SEGMENTS: RegExp[] = [
  /(\/blobs\/)[^/?#]+/g,
  /(\/webhooks\/w\/[^/?#]+\/)(?!\{token\})[^/?#]+/g,
];
/** Query parameters that are credentials: our own tokens and the signature parts of S3 presigned URLs. */
const CREDENTIAL_QUERY =
  /([?&](?:token|url_token|api_key|sig|signature|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)=)[^&#]*/gi;
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi;

/**
 * A URL or path fit for a log line: credentials in the path, the query and the userinfo (`https://user:token@…`)
 * replaced by `{token}` / `***`. Everything that logs a URL goes through this.
 */
export function redactUrl(url: string): string {
  let out = url.replace(USERINFO, '$1***@').replace(CREDENTIAL_QUERY, '$1***');
  for (const segment of CREDENTIAL_SEGMENTS) out = out.replace(segment, '$1{token}');
  return out;
}
