/**
 * The access log's URL without credentials: a client may put a token or password in the query
 * string (`?access_token=…`, as RFC 6750 §2.3 allows elsewhere). The gateway refuses it, but the
 * log line would keep it; the value of any such parameter is replaced by `[redacted]`.
 */

/** Parameter names (case-insensitive, `-` and `_` alike) whose value is never logged. */
const SECRET_PARAMETERS: ReadonlySet<string> = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'jwt',
  'bearer',
  'authorization',
  'password',
  'passwd',
  'pwd',
  'secret',
  'client_secret',
  'api_key',
  'apikey',
  // A signed file link's MAC (uploads/file-links.ts): whoever has it may download the file.
  'sig',
]);

export const REDACTED = '[redacted]';

function parameterName(raw: string): string {
  let name = raw.replace(/\+/g, ' ');
  try {
    name = decodeURIComponent(name);
  } catch {
    // A broken percent-encoding: compare the raw text.
  }
  return name.trim().toLowerCase().replace(/-/g, '_');
}

export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark === -1) return url;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return SECRET_PARAMETERS.has(parameterName(name)) ? `${name}=${REDACTED}` : pair;
    });
  return `${url.slice(0, mark)}?${query.join('&')}`;
}
