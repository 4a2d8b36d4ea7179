/**
 * URL rules of monitored endpoints: the public `url` drops the query and the user-info (both
 * hidden values); the verification URL is fixed by scheme, host and port.
 */

/** An absolute http(s) URL with a host, or null. */
export function parseProbeUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (!url.hostname) return null;
    return url;
  } catch {
    return null;
  }
}

/** The configured URL without query, fragment and user-info. */
export function publicUrl(configured: string): string {
  const url = new URL(configured);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.toString();
}

/**
 * The configured URL with its hidden parts (the ones `publicUrl` drops) each shown as `marker`:
 * `https://[withheld]@api.example.com/health?[withheld]`. The URL itself when it has none; `marker`
 * alone when it does not parse.
 */
export function maskedUrl(configured: string, marker: string): string {
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    return marker;
  }
  const userInfo = url.username !== '' || url.password !== '' ? `${marker}@` : '';
  const query = url.search !== '' ? `?${marker}` : '';
  const fragment = url.hash !== '' ? `#${marker}` : '';
  return userInfo === '' && query === '' && fragment === '' ? configured : `${url.protocol}//${userInfo}${url.host}${url.pathname}${query}${fragment}`;
}

/** True when the configured URL carries a query (its values are hidden). */
export function urlQueryConfigured(configured: string): boolean {
  return new URL(configured).search.length > 1;
}

/** `{scheme}://{host[:port]}/.well-known/monitor-verification/{endpoint_id}` */
export function verificationUrl(configured: string, endpointId: number): string {
  const url = new URL(configured);
  return `${url.protocol}//${url.host}/.well-known/monitor-verification/${endpointId}`;
}
